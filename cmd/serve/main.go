// Command serve answers image searches over HTTP from a finished bowline
// run, or from the run a root's published.json names, following new
// publishes:
//
//	go run ./cmd/serve --run /tmp/bowline-shapes --addr 127.0.0.1:8080
//
// The API:
//
//	POST /v1/search?k=10&learner=solis-ada   body: the photo's bytes (or a form with a file "image")
//	GET  /v1/search?image_id=…&k=10&learner=…[&rerank=100][&expand=true|N][&near=true|N]
//	     → {"results":[{"image_id":…,"label":…,"score":…[,"inliers":…]},…],"matched":N,"took_ms":…,"learner":…,"run":…}
//	       (only matching images: of positive score under a learner of bags
//	       of words; matched counts them all, results are the best k)
//	GET  /v1/image?image_id=…[&size=160]      the corpus image, or a JPEG thumbnail
//	GET  /healthz, GET /readyz, GET /metrics (Prometheus text format)
//	GET  /                                    a search page
//
// rerank=N (both searches, at most --max_rerank) verifies the best N results
// spatially against the query's keypoints, from the run's geometry files,
// and puts the verified first, most inliers first; expand=N (or true: 10;
// at most --max_expand) searches again with the query's bag of words
// averaged with at most N verified results' (average query expansion);
// near=N (or true: 10; at most --max_near; with rerank) also verifies the
// query's N best near-copy candidates, the images whose rarest words it
// holds most of, and puts those verified among the re-ranked: a copy of
// a collection photo finds its source where the learner's weights
// dropped the words that single it out.
// Verified results carry their inliers. A run without geometry files
// answers either with 400.
//
// A bad request gets a 4xx and {"error": "…"}: 400 for a malformed query,
// k out of range or an unknown learner, 404 for an unknown image id, 405
// for a wrong method, 413 for a body over --max_body, 415 for a body that
// is no image the service decodes, 422 for an image over --max_pixels or
// one without features; 503 when --max_inflight searches by id (or
// --max_photo_inflight photo searches, which have slots of their own) run
// and a slot stays taken for --queue_wait, 504 past --timeout, which the
// description of a photo looks at as it goes. GET /readyz is 503 while
// every slot of id searches is taken; /healthz stays 200. A handler that panics answers 500 and the service
// goes on.
//
// With a root, published.json is checked every --reload and on SIGHUP; a
// new run is loaded beside the one in service (memory for both, for a
// while) and swapped in whole: queries in flight finish on the old index.
// A run that fails to load is logged and counted, and the old one stays.
// SIGINT or SIGTERM stop accepting connections and let the requests in
// flight finish (at most --drain).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/transforms/search"
)

const synopsis = `Usage: serve --run <run dir | root with published.json> [--addr 127.0.0.1:8080] [flags]

Answers image searches over HTTP (the package documentation describes the API).`

var groups = []cmdline.Group{
	{Title: "The run", Flags: []string{"run", "learners", "default_learner", "max_keypoints", "no_geometry", "image_root", "reload"}},
	{Title: "Listening", Flags: []string{"addr", "timeout", "drain"}},
	{Title: "Requests", Flags: []string{"max_body", "max_pixels", "max_k", "max_rerank", "max_expand", "max_near"}},
	{Title: "Concurrency and memory", Flags: []string{"max_inflight", "max_photo_inflight", "queue_wait", "memory_idle"}},
}

// settings are the command line's: the service's Config and what main
// needs beside it.
type settings struct {
	cfg           Config
	run, addr     string
	learners      []string
	maxKeypoints  int
	noGeometry    bool
	reload, drain time.Duration
}

// parseFlags reads the command line, writing --help to help; its errors
// are cmdline.UsageErrors, one line naming the flag.
func parseFlags(args []string, help io.Writer) (settings, error) {
	s := settings{cfg: Config{
		MaxBody:          10 << 20,
		MaxPixels:        16_000_000,
		Timeout:          10 * time.Second,
		MaxInflight:      2 * runtime.GOMAXPROCS(0),
		MaxPhotoInflight: max(1, runtime.GOMAXPROCS(0)/2),
		MemoryIdle:       2 * time.Second,
		QueueWait:        time.Second,
		MaxK:             1000,
		MaxRerank:        DefaultMaxRerank,
		MaxExpand:        DefaultMaxExpand,
		MaxNear:          DefaultMaxNear,
	}}
	cfg := &s.cfg
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&s.run, "run", "", "a finished bowline run's output directory, or a root whose published.json names the run (local or gs://); required")
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "address to listen on")
	maxBody := cmdline.ByteSize(cfg.MaxBody)
	fs.Var(&maxBody, "max_body", "largest request body (a photo), in bytes or with a unit: 10MiB, 500KB")
	fs.Int64Var(&cfg.MaxPixels, "max_pixels", cfg.MaxPixels, "refuse photos whose header declares more pixels, before decoding them (at most the run's own --max_pixels; 0: the run's); a photo's decoded pixels and its gray copy take 8 bytes a pixel")
	learnerList := fs.String("learners", "", "load only these learners' indexes, comma-separated (\"tfidf\" is the baseline; default: all the run has; the baseline's index is as large as the bags of words)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "longest a request may take (its search's deadline; the connection's read and write timeouts follow)")
	fs.IntVar(&cfg.MaxInflight, "max_inflight", cfg.MaxInflight, "searches by id and thumbnail reads run at once")
	fs.IntVar(&cfg.MaxPhotoInflight, "max_photo_inflight", cfg.MaxPhotoInflight, "photo searches (decoding and describing an upload: a core and up to a few hundred MB each) run at once, in slots of their own")
	fs.DurationVar(&cfg.MemoryIdle, "memory_idle", cfg.MemoryIdle, "after this long without photo searches, return their memory to the operating system")
	fs.DurationVar(&cfg.QueueWait, "queue_wait", cfg.QueueWait, "how long a request waits for a free slot before it gets 503")
	fs.IntVar(&cfg.MaxK, "max_k", cfg.MaxK, "largest k a request may ask for")
	fs.IntVar(&cfg.MaxRerank, "max_rerank", cfg.MaxRerank, "largest rerank= a request may ask for (results verified spatially, some tens of microseconds each)")
	fs.IntVar(&cfg.MaxExpand, "max_expand", cfg.MaxExpand, "largest expand= a request may ask for (verified results a query is averaged with)")
	fs.IntVar(&cfg.MaxNear, "max_near", cfg.MaxNear, "largest near= a request may ask for (near-copy candidates verified with rerank=)")
	fs.IntVar(&s.maxKeypoints, "max_keypoints", 0, "keep at most this many keypoints of each image for spatial verification, the largest-scale (10 bytes each; 0: all the run's geometry files hold)")
	fs.BoolVar(&s.noGeometry, "no_geometry", false, "load no keypoint geometry: less memory, and rerank= and expand= refused")
	fs.StringVar(&cfg.DefaultLearner, "default_learner", "", "learner of requests that name none (default: the one published.json names for serving, else the run's first)")
	fs.StringVar(&cfg.ImageRoot, "image_root", "", "directory that relative image paths of the run are read from, for thumbnails: where the job ran, if its --input was relative (default: the working directory)")
	fs.DurationVar(&s.reload, "reload", time.Minute, "how often to check published.json for a new run (0: only on SIGHUP)")
	fs.DurationVar(&s.drain, "drain", 30*time.Second, "on SIGINT or SIGTERM, how long requests in flight may take to finish")
	if err := cmdline.ParseArgs(fs, args, help, synopsis, groups); err != nil {
		return s, err
	}
	cfg.MaxBody = int64(maxBody)
	if *learnerList != "" {
		s.learners = strings.Split(*learnerList, ",")
	}
	if fs.NArg() > 0 {
		return s, cmdline.Usagef("unexpected arguments %q: flags are written --name value%s", fs.Args(), cmdline.HelpHint)
	}
	if err := cmdline.Require(fs, "run"); err != nil {
		return s, fmt.Errorf("%w%s", err, cmdline.HelpHint)
	}
	return s, nil
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	fail := func(code int, err error) {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		os.Exit(code)
	}
	set, err := parseFlags(os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fail(cmdline.ExitUsage, err)
	}
	cfg := set.cfg

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rl := NewReloader(set.run, openSearch(search.Options{MaxPixels: cfg.MaxPixels, Learners: set.learners, MaxKeypoints: set.maxKeypoints, NoGeometry: set.noGeometry}), log)
	ix, err := rl.Open(ctx)
	if err != nil {
		fail(cmdline.ExitFailed, err)
	}
	if l := cfg.DefaultLearner; l != "" && !slices.Contains(ix.Learners(), l) {
		fail(cmdline.ExitUsage, fmt.Errorf("--default_learner %s: the run has %s", l, strings.Join(ix.Learners(), ", ")))
	}
	srv := NewServer(ix, cfg, log)
	rl.Srv = srv
	log.Info("index loaded", "run", ix.Run(), "images", ix.Images(), "learners", ix.Learners(),
		"memory_bytes", ix.MemoryBytes(), "load_seconds", time.Since(start).Seconds())

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reloads := make(chan struct{}, 1)
	go func() {
		for range hup {
			select {
			case reloads <- struct{}{}:
			default: // a reload is already pending
			}
		}
	}()
	go rl.Watch(ctx, set.reload, reloads)

	ln, err := net.Listen("tcp", set.addr)
	if err != nil {
		fail(cmdline.ExitFailed, err)
	}
	log.Info("listening", "addr", "http://"+ln.Addr().String())
	if err := Serve(ctx, ln, srv, cfg.Timeout, set.drain); err != nil {
		fail(cmdline.ExitFailed, err)
	}
	log.Info("stopped")
}

// Serve serves h on ln until ctx is done, then stops accepting and waits
// at most drain for the requests in flight. The connection's timeouts
// follow the request timeout: reading a body (a photo) and writing an
// answer get it in full beside the search's own.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, timeout, drain time.Duration) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 10*time.Second,
		WriteTimeout:      2*timeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    4 * maxQuery, // a longer query string gets the handler's JSON 414
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("draining requests: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
