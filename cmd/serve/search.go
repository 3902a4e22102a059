package main

import (
	"context"
	"errors"

	"github.com/bowline/bowline/transforms/search"
)

// defaultExpand is expand=true's count, defaultNear near=true's.
const (
	defaultExpand = search.DefaultExpand
	defaultNear   = search.DefaultNearCopies
)

// openSearch returns the LoadFunc of the real index: search.Open with opt.
func openSearch(opt search.Options) LoadFunc {
	return func(ctx context.Context, run string) (Index, error) {
		ix, err := search.Open(ctx, run, opt)
		if err != nil {
			return nil, err
		}
		return searchIndex{ix}, nil
	}
}

// searchIndex adapts *search.Index to Index: its hits to the service's,
// its errors to the service's classes.
type searchIndex struct{ *search.Index }

func (x searchIndex) SearchID(learner, imageID string, k int, r Refine) (Found, error) {
	res, err := x.Index.SearchIDRefined(learner, imageID, k, search.Refine(r))
	return x.convert(res), classify(err)
}

func (x searchIndex) SearchImage(ctx context.Context, learner string, data []byte, k int, r Refine) (Found, error) {
	res, err := x.Index.SearchImageRefined(ctx, learner, data, k, search.Refine(r))
	return x.convert(res), classify(err)
}

func (x searchIndex) convert(res search.Result) Found {
	out := make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		label, _ := x.Label(h.ImageID)
		out[i] = Hit{ImageID: h.ImageID, Label: label, Score: h.Score}
		if h.Verified {
			out[i].Inliers = h.Inliers
		}
	}
	return Found{Hits: out, Matched: res.Matched}
}

// classes pairs the search package's errors with the service's.
var classes = []struct{ from, to error }{
	{search.ErrUnknownImage, errUnknownImage},
	{search.ErrUnknownLearner, errUnknownLearner},
	{search.ErrBadImage, errBadImage},
	{search.ErrTooLarge, errTooLarge},
	{search.ErrNoFeatures, errNoFeatures},
	{search.ErrNoGeometry, errCannotRefine},
	{search.ErrCannotExpand, errCannotRefine},
}

// classify wraps err with the service's class of it, keeping its text.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, c := range classes {
		if errors.Is(err, c.from) {
			return classed{err, c.to}
		}
	}
	return err
}

// classed is an error of the search package that also matches the
// service's class.
type classed struct{ err, class error }

func (c classed) Error() string   { return c.err.Error() }
func (c classed) Unwrap() []error { return []error{c.err, c.class} }
