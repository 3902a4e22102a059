package fileio

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
)

// Sample rows of every type, with lists (long, short, empty, nil), unicode
// and extreme numbers. The lists a test expects back are given by want().

func sampleImages() []formats.Image {
	return []formats.Image{
		{ImageID: "img-001", URI: "gs://bucket/photos/img 001.jpg", Label: "cat", Tags: []string{"furry", "pet", "日本語", ""}},
		{ImageID: "ünïcødé-ß", URI: "/local/path/ünïcødé.png", Label: "", Tags: []string{}},
		{ImageID: "emoji-🐱", URI: "", Label: "dog", Tags: nil},
	}
}

func sampleDeadLetters() []formats.DeadLetter {
	return []formats.DeadLetter{
		{ImageID: "bad", URI: "gs://b/bad.jpg", Stage: "decode", Reason: "image: unknown format"},
		{ImageID: "bad", URI: "gs://b/bad.jpg", Stage: "sift", Reason: "no keypoints\nsecond line"},
		{},
	}
}

func sampleFeatures() []formats.Features {
	desc := func(seed byte) []byte {
		d := make([]byte, formats.DescriptorSize)
		for i := range d {
			d[i] = seed + byte(i*7)
		}
		return d
	}
	return []formats.Features{
		{
			ImageID: "a", Label: "cat", Tags: []string{"pet", "ünï"}, Width: 640, Height: 480,
			X:     []float32{0, 1.5, -0.5, 639.25},
			Y:     []float32{0, 2.5, 100, 479},
			Scale: []float32{1.6, 3.2, 6.4, math.MaxFloat32},
			Angle: []float32{0, math.Pi, 2*math.Pi - 0.001, float32(math.Inf(1))},
			Descriptors: [][]byte{
				desc(0), desc(1), desc(255), desc(42),
			},
		},
		{ImageID: "no-keypoints", Label: "dog", Width: 1, Height: 1,
			X: []float32{}, Y: []float32{}, Scale: []float32{}, Angle: []float32{}, Descriptors: [][]byte{}},
		{ImageID: "nil-lists"},
	}
}

func sampleWords() []formats.Word {
	c := make([]float32, formats.DescriptorSize)
	for i := range c {
		c[i] = float32(i) / 3
	}
	return []formats.Word{
		{WordID: 0, Centroid: c},
		{WordID: math.MaxUint32, Centroid: []float32{-1, 0, 1}},
		{WordID: 7, Centroid: []float32{}},
	}
}

func sampleWordStats() []formats.WordStat {
	return []formats.WordStat{
		{WordID: 0, DF: 0, IDF: 0},
		{WordID: 12345, DF: math.MaxInt64, IDF: 3.25},
		{WordID: math.MaxUint32, DF: -1, IDF: float32(math.Inf(-1))},
	}
}

func sampleBoWs() []formats.BoW {
	return []formats.BoW{
		{ImageID: "a", Label: "cat", WordIDs: []uint32{1, 5, 9, math.MaxUint32}, Weights: []float32{0.5, 0.5, 0.5, 0.5}},
		{ImageID: "b", Label: "狗", WordIDs: []uint32{}, Weights: []float32{}},
		{ImageID: "c", Label: "", WordIDs: []uint32{3}, Weights: []float32{1}},
	}
}

func sampleTriplets() []formats.Triplet {
	return []formats.Triplet{
		{Seq: 0, Query: "a", Positive: "b", Negative: "c"},
		{Seq: math.MaxInt64, Query: "ü", Positive: "ö", Negative: "ä"},
		{Seq: -5, Query: "", Positive: "", Negative: ""},
	}
}

func sampleModelTensors() []formats.ModelTensor {
	return []formats.ModelTensor{
		{Learner: "lomdml", Params: `{"eta":0.01}`, Dims: []int64{2, 3}, Steps: 7, Index: 0, Values: []float64{0.25, 0.75}},
		{Learner: "lomdml", Params: `{"eta":0.01}`, Dims: []int64{2, 3}, Steps: 7, Index: 1, Values: []float64{1, -0.5, 1e-300, 3}},
	}
}

func sampleModelWeights() []formats.ModelWeight {
	return []formats.ModelWeight{
		{Learner: "solis-ada", Params: `{"lambda":0.01,"eta":"0.1"}`, WordID: 3, Weight: 0.75},
		{Learner: "solis-ada", Params: `{"lambda":0.01,"eta":"0.1"}`, WordID: math.MaxUint32, Weight: -2},
		{Learner: "ø", Params: "", WordID: 0, Weight: math.SmallestNonzeroFloat32},
	}
}

func samplePostings() []formats.Posting {
	return []formats.Posting{
		{Learner: "tfidf", WordID: 1, Weight: 1, Images: []string{"a", "b", "ünï"}, Values: []float32{0.1, 0.2, 0.3}},
		{Learner: "tfidf", WordID: 2, Weight: 0, Images: []string{}, Values: []float32{}},
		{Learner: "", WordID: math.MaxUint32, Weight: 0.5, Images: []string{""}, Values: []float32{0}},
	}
}

func sampleReportRows() []formats.ReportRow {
	return []formats.ReportRow{
		{Method: "tfidf", Input: "bow", Relevance: "label", Queries: 100, MAP: 0.5, PrecisionAt10: 0.4, NDCGAt10: 0.6,
			Sparsity: 0, Vocabulary: 1000, IndexPostings: 9878},
		{Method: "solis-ada", Relevance: "label", Queries: math.MaxInt64, MAP: math.SmallestNonzeroFloat64,
			PrecisionAt10: 1, NDCGAt10: math.MaxFloat64, Sparsity: 0.999, Vocabulary: -1, IndexPostings: math.MaxInt64,
			Split: "held-out", MAPLow: -1, MAPHigh: 2, PrecisionAt10Low: 0.25, PrecisionAt10High: 0.75,
			Baseline: "tfidf", MAPDiff: -0.5, MAPDiffLow: -0.75, MAPDiffHigh: -0.25, MAPDiffP: 0.001, Significant: true},
	}
}

func sampleQueryScores() []formats.QueryScore {
	return []formats.QueryScore{
		{Method: "tfidf", Input: "bow", Split: "held-out", ImageID: "img-001", Label: "cat", AP: 0.5, P10: 0.4, NDCG10: 0.6},
		{Method: "solis-ada+sv", Input: "bow", Split: "training", ImageID: "ünïcødé-ß", AP: math.SmallestNonzeroFloat64, P10: 1, NDCG10: math.MaxFloat64},
		{},
	}
}

// emptyNotNil returns a deep copy of rows (a slice) in which every nil slice is
// an empty, non-nil one and every field left out of the file (tagged
// parquet:"-") is zero: what a round trip through Parquet gives back.
func emptyNotNil(rows any) any {
	v := reflect.ValueOf(rows)
	out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	for i := range v.Len() {
		out.Index(i).Set(emptyNotNilValue(v.Index(i)))
	}
	return out.Interface()
}

func emptyNotNilValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("parquet") == "-" {
				continue // not written: read back as the zero value
			}
			c.Field(i).Set(emptyNotNilValue(v.Field(i)))
		}
		return c
	case reflect.Slice:
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(emptyNotNilValue(v.Index(i)))
		}
		return c
	default:
		return v
	}
}

// roundTrip describes a round trip of one row type through WriteFile and
// ReadFile, with the row type hidden behind closures.
type roundTrip struct {
	name  string
	rows  any
	write func(ctx context.Context, path string) error
	read  func(ctx context.Context, path string) (any, error)
	all   func(ctx context.Context, pattern string) (any, error)
}

func tripOf[T any](name string, rows []T) roundTrip {
	return roundTrip{
		name:  name,
		rows:  rows,
		write: func(ctx context.Context, path string) error { return WriteFile(ctx, path, rows) },
		read: func(ctx context.Context, path string) (any, error) {
			return ReadFile[T](ctx, path)
		},
		all: func(ctx context.Context, pattern string) (any, error) {
			return ReadAll[T](ctx, pattern)
		},
	}
}

func allTrips() []roundTrip {
	return []roundTrip{
		tripOf("images", sampleImages()),
		tripOf("dead-letters", sampleDeadLetters()),
		tripOf("features", sampleFeatures()),
		tripOf("codebook", sampleWords()),
		tripOf("idf", sampleWordStats()),
		tripOf("bow", sampleBoWs()),
		tripOf("triplets", sampleTriplets()),
		tripOf("model", sampleModelWeights()),
		tripOf("model-dense", sampleModelTensors()),
		tripOf("index", samplePostings()),
		tripOf("report", sampleReportRows()),
		tripOf("query-scores", sampleQueryScores()),
	}
}

func TestAllRowTypesHaveSamples(t *testing.T) {
	seen := map[reflect.Type]bool{}
	for _, rt := range allTrips() {
		seen[reflect.TypeOf(rt.rows).Elem()] = true
	}
	for _, typ := range formats.RowTypes {
		if !seen[typ] {
			t.Errorf("no round-trip sample for %v", typ)
		}
	}
}
