// Package formats defines the files the pipeline reads and writes — their
// row types and the Parquet codec — without any I/O of its own and without
// Beam, so that pure stages can use the row types.
//
// Every table is a set of Parquet files named <name>-SSSSS-of-NNNNN.parquet
// (see ShardName) in one directory, local or gs://bucket/dir. The row types
// of schema.go are the Parquet schemas and also the Beam element types of the
// stages that produce them. Package formats/fileio reads and writes files by
// path (local or gs://) through Beam's file systems, and formats/parquetio
// reads and writes sharded tables from a pipeline (and registers the row
// types with Beam).
//
// # Schemas
//
// images-*.parquet (Image): one row per image the pipeline was asked to
// process. Columns: image_id (string, unique in a run: the labels CSV's id
// column, or else the image's path relative to the input, extension kept), uri (string, local
// path or gs:// URL), label (string, may be empty), tags (list<string>).
// Part p of P holds the images whose ShardOf(image_id, P) is p, sorted by
// id; features, word counts and bags of words keep the same parts.
//
// dead-letters-*.parquet (DeadLetter): one row per input a stage refused.
// Columns: image_id, uri, stage (string, e.g. "decode", "sift"), reason
// (string). One image can have several rows, one per refusing stage. A row
// of the input refused for repeating an image id has an empty image_id (it
// never became an image; the kept image has that id) and names the kept row
// in its reason, so that images anti-joined with dead letters on image_id
// keeps the kept image.
//
// features-*.parquet (Features): one row per image, holding all its SIFT
// keypoints as parallel lists. Columns: image_id, label, tags (list<string>,
// from the input), content (string, the identity of the bytes described:
// "sha256:" and the hex SHA-256 of the image file, see ContentOf, or for a
// synthetic image its corpus settings, id and label; an incremental run
// carries a row over when id and content are unchanged), width and height
// (int32, pixels of the image the keypoints were found in), x, y, scale,
// angle (list<float>; keypoint i is x[i], y[i], scale[i], angle[i]),
// descriptors (list<binary>, each DescriptorSize bytes), and the global
// modalities colour (81), edge (37), gabor (120), lbp (59) and gist (512),
// each a list<float>, empty unless the run extracted global features.
//
// codebook-*.parquet (Word): one row per visual word. Columns: word_id
// (uint32), centroid (list<float>, DescriptorSize values).
//
// idf-*.parquet (WordStat): one row per visual word. Columns: word_id
// (uint32), df (int64, indexed images containing the word), idf (float).
//
// bow-*.parquet (BoW): one row per image, its TF-IDF weighted, L2-normalised
// bag of visual words. Columns: image_id, label, word_ids (list<uint32>,
// ascending), weights (list<float>, weights[i] belongs to word_ids[i]).
//
// geometry-*.parquet (Geometry): one row per image, where its keypoints
// are, for spatial verification; written by the quantisation beside the
// word counts, in the same parts, from the same search (an incremental
// run carries an image's row with its counts). Columns: image_id, width
// and height (int32, the image's pixels, as in features), and one list
// per quantity with keypoint i at index i, sorted by word: word_ids
// (list<uint32>, ascending: the hard, nearest word of each keypoint, also
// under soft assignment, so an image's word_ids with repetitions are its
// hard counts), x and y (list<uint16>: round((x+0.5)·65535/width), the
// same with height; a 131,070th of the side at most off, 0.012 pixels of a
// 1,600-pixel side), log_scale (list<uint16> of byte codes:
// round(16·(log₂σ+4)), clamped to [0, 255]; σ from 1/16 to ~3,900 pixels,
// at most 2.2% off) and angle (list<uint16> of byte codes: round(256·θ/2π)
// mod 256, at most 0.70° off). Geometry.Decode gives back pixels and
// radians; ReadGeometry reads a few images of a part. Every list is
// delta-encoded (DELTA_BINARY_PACKED): on ETH-80 (70 keypoints an image at
// 256×256) the file takes 8.1 bytes a keypoint — word ids 1.4, x and y 2.2
// each, log_scale 1.0, angle 1.2 — 5.2% of a default run's bytes (the
// features take 67%), so every run writes it; a million photos of 2,000
// keypoints would take about 16 GB. zstd gains nothing on these
// near-random values. Byte strings packed little-endian would take 7.6
// bytes, but DuckDB reads them as BLOBs it has no function to unpack; a
// list of uint8 is no option (parquet-go writes it empty).
//
// triplets-*.parquet (Triplet): one row per training triplet. Columns: seq
// (int64, the order online learners consume triplets in), query, positive,
// negative (string image ids; query is more similar to positive than to
// negative).
//
// model-*.parquet (ModelWeight): one row per non-zero weight of a learned
// diagonal similarity. Columns: learner (string), params (string, the
// learner's hyper-parameters as JSON, repeated on every row), word_id
// (uint32), weight (float). Absent words have weight zero.
//
// model-<learner>-*.parquet for a learner of dense global features
// (ModelTensor): one row per vector of the model's state. Columns: learner,
// params (JSON), dims (list<int64>, the modality dimensions), steps
// (int64), index (int32, the vector's position) and values (list<double>;
// the layout is the learner's, documented on its State method).
//
// state-<learner>-*.parquet (ModelTensor) for a learner of bags of words:
// its final learners.State, what its weights are derived from (for
// SOLIS-ADA the subgradient sums and squared sums), from which an
// incremental run continues training. One row per vector of the state:
// learner (the name it is reported under), params (the JSON of its
// hyper-parameters; a warm start needs the same), dims (one value: the
// vocabulary size), steps, index and values.
//
// index-*.parquet (Posting): one row per (learner, visual word), its
// inverted list. Columns: learner, word_id (uint32), weight (float, the
// learned weight of the word), images (list<string>) and values
// (list<float>, the BoW weight of the word in images[i]; with the job's
// --cosine, the default, divided by the image's length under the learner's
// positive weights, √(Σ max(w, 0)·x²), so that the index ranks by the
// cosine in the learner's metric; TF-IDF's are the BoW weights either way).
//
// report-*.parquet (ReportRow): one row per (method, query set). Columns:
// method, input ("bow" or "global": what the method ranks by), relevance
// (string), split ("held-out": queries no learner trained on; "training":
// queries drawn from the training images), queries (int64), map,
// precision_at_10, ndcg_at_10, map_low, map_high, precision_at_10_low,
// precision_at_10_high (95% bootstrap intervals over queries), baseline
// (the method a learner is compared with, "" for a baseline), map_diff,
// map_diff_low, map_diff_high, map_diff_p (the paired bootstrap of the
// learner's mAP minus the baseline's on the same queries), significant
// (bool), sparsity (double), vocabulary (int64), index_postings (int64).
// The same report, with the train, index and query times and the
// precision–recall and per-label figures that the Parquet file leaves out
// (times differ from run to run), is also written as report.json and
// report.html.
//
// query-scores-*.parquet (QueryScore): one row per (method, query set,
// query) the run evaluated: every query of every report row, once.
// Columns: method, input and split (as report's), image_id (the query),
// label, ap (its average precision), precision_at_10 and ndcg_at_10; a
// report row's map, precision_at_10 and ndcg_at_10 are their means over
// its queries. The evaluation writes each shard of queries' rows as it
// scores them. A later run given this one with --compare_to pairs its own
// rows with these by method, input, split and image_id and compares the
// two runs query by query (paired bootstrap). Sharded by size.
//
// # report.json
//
// report.json (package transforms/report, type Report) is one JSON object
// whose keys are snake_case, as the Parquet columns are, with typed values
// (numbers are numbers, flags' booleans booleans). Its keys:
//
//   - input, output (string): the run's input and output directory.
//   - config (object): the command's own flags by flag name, each with its
//     flag's type, e.g. "vocab": 1000, "akm": false, "input": "a.csv"
//     ("vocab" is the flag; the run's vocabulary size is
//     counts.vocabulary).
//   - hyper_parameters (object): per learner name, its hyper-parameters by
//     name (numbers), defaults and scaling included.
//   - counts (object): images, dead_letters, images_described, keypoints,
//     vocabulary (the number of visual words), triplets, duplicate_paths
//     (files named by more than one image id), all integers.
//   - compared_to (object, with --compare_to): run (the earlier run's
//     directory), methods (its rows, as methods below), query_scores (the
//     earlier run's query-scores files, absent for a run made before
//     them), paired (array, when both runs have per-query scores and
//     share queries: one object per method and query set both runs
//     evaluated, in the order of this run's rows (the report's methods
//     below; one without a row last, by method, input and split): method,
//     input, split,
//     queries (paired: evaluated by both), earlier_queries, later_queries,
//     map_diff (this run's mean AP minus the earlier run's over the paired
//     queries), map_diff_low, map_diff_high (its 95% paired bootstrap
//     interval), map_diff_p, significant; queries 0 and no difference
//     where a method's sets share no query) and unpaired (why there is no
//     paired array: the earlier run has no per-query scores, or the
//     queries differ entirely).
//   - sweep (object, with --sweep): learner, param, values (numbers) and
//     methods (the learner names trained with values[i]).
//   - tuning (object, with --tune or --target_sparsity): validation_fraction
//     (the share of each label's training images carved out for
//     validation), validation_images, validation_queries,
//     validation_searched_images (the training images the validation
//     queries search: no held-out image), target_sparsity (0 or absent:
//     none), validation_baseline and validation_baseline_map (TF-IDF's
//     validation mAP on the same queries and images, to read the points'
//     against), learners (array, one per tuned learner): learner, axes (the
//     hyper-parameters the grid varies), points (array: method, the grid
//     point's learner instance; params; validation_map; sparsity, of its
//     model trained on every training triplet; tune_sparsity, of the one
//     trained without the validation images), chosen (index into points),
//     params (the chosen hyper-parameters, also under hyper_parameters),
//     target_met (false: no point reached target_sparsity and the
//     sparsest was chosen), why (text).
//   - dead_letters (object): total; kinds (stage, example: one reason of
//     the kind verbatim, count), most frequent first, where a kind is the
//     reasons that differ only in the image's own id and URI and in
//     numbers; first (the first few dead-letters rows: image_id, uri,
//     stage, reason).
//   - split (object): train_images, query_images, query_fraction.
//   - stages (array, in the job's order): name, units, rows_in, rows_out,
//     cpu_units, cpu_seconds, unit_wall_seconds, wall_seconds,
//     start_unix_ms, end_unix_ms (see report.Stage).
//   - methods (array): one object per report-*.parquet row, its columns
//     under the same names (method, input, relevance, split, queries, map,
//     precision_at_10, ndcg_at_10, map_low, map_high, precision_at_10_low,
//     precision_at_10_high, baseline, map_diff, map_diff_low,
//     map_diff_high, map_diff_p, significant, sparsity, vocabulary,
//     index_postings), plus train_seconds,
//     index_seconds, query_seconds, precision_recall (11 interpolated
//     precisions at recall 0, 0.1, …, 1), labels and label_map (per-label
//     mAP). A baseline's row (tfidf, euclidean) has no baseline, map_diff,
//     map_diff_low, map_diff_high, map_diff_p or significant: it is not
//     compared with anything.
//   - map_diff_p_resolution (number): the smallest p-value map_diff_p can
//     tell from 0 (2/resamples of the paired bootstrap); a map_diff_p of 0
//     means below it.
//
// Readers (compare_to, the nightly quality gate, cmd/serve and cmd/query
// through transforms/search) also read a report.json written before keys
// were snake_case: methods[] and dead_letters.first[] under Go field names
// ("MAP", "PrecisionAt10", "ImageID") and config values as strings.
//
// manifest.json, written last, lists every file of a finished run; readers
// trust only the files it lists. Package formats/run owns the run
// directory: every file name above, the manifest and the settings. Its
// keys: job ("bowline" or "retrain"), finished (RFC 3339), files (name and
// bytes of each file, sorted by name) and settings (run.Settings), what a
// reader needs to describe, quantise and rank a query as the run did:
// sift (scales_per_octave, sigma, contrast_threshold, edge_threshold,
// double_image, double_below (0, or absent: every image doubled),
// max_keypoints, max_side, root_sift), max_pixels,
// vocabulary (words; forest {trees, leaf_size, checks, seed} for an
// approximate vocabulary, and ivf {lists, probes, seed} when its hard
// words go through an IVF), soft (words, sigma), tf, cosine, label_column,
// seed, and learners (each learner's hyper-parameters as it trained,
// tuned values included). The settings are recorded by meaning, never by
// the command-line flag that set them. A manifest written before it held
// settings has none: readers then take them from report.json's config
// (flag by flag) and incremental.json's vocabulary settings, through
// formats/run's legacy decoder, the only code that knows those flag names.
// A run written by retrain holds copies of its base run's corpus tables
// (images, dead-letters, features, counts, geometry, codebook, idf, bow)
// and the base's settings with its own learners, so it is read like any
// run.
// incremental.json records what the run reused of the run it started from
// (images described and carried over, whether the vocabulary was kept and
// its drift, the learners warm-started) and what the next run needs (the
// distortion of the vocabulary, the settings compared). Its keys are
// snake_case: previous, full_reason, describe, learning and bow (the
// settings compared, each a JSON object with snake_case keys, e.g.
// "sift": {"max_side": 1600, …}), parts, images (listed, described,
// carried), vocabulary (settings, an object such as {"k": 1000, "approx":
// false, …}; kept, reason, reference, measured, drift) and warm_started.
// An incremental.json written before the settings were objects (strings
// of JSON with Go field names, the vocabulary's "k=1000 approx=false …")
// reads as the same settings, so a run can start from it.
//
// In an incremental run the parts are those of the run it started from
// times a power of two (PartsFrom), so that part q of every partitioned
// output holds only images of its part q mod that count; features parts'
// records list their carried images (Part.Carried).
//
// # Encoding
//
// Lists use the standard three-level LIST layout (<col> (LIST) { repeated
// group list { element } }), which DuckDB, Spark and pyarrow read as lists.
// Pages are compressed with zstd: better ratios than snappy for about the
// same decoding speed, read by every common Parquet reader, and implemented
// in pure Go, so workers still build with CGO_ENABLED=0. Lists are not
// nullable: a nil and an empty list are the same on disk, and both read back
// as an empty, non-nil slice. Row groups are cut at about 128 MiB of
// buffered data. Reading matches columns to fields by name and converts
// values where parquet-go can (a value that does not convert is an error); a
// field whose column is missing, or has a different structure, reads as its
// zero value.
//
// # Guarantees
//
//   - Determinism: encoding the same rows in the same order writes the same
//     bytes, whichever of Encode and EncodeOf is used. Every row type
//     implements Keyed; parquetio shards rows by ShardOf(Key()) and sorts
//     each shard by Key (ties broken by the row's Beam encoding), so a re-run
//     of a pipeline on the same input writes byte-identical files.
//   - Streaming reads: Decode and DecodeOf decode a few rows at a time, so
//     memory does not grow with the file.
package formats
