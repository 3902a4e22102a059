package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/published"
)

// LoadFunc opens the index of --run: a run directory, or a root whose
// published.json names the run.
type LoadFunc func(ctx context.Context, run string) (Index, error)

// Reloader follows a root's published.json: when the run it names changes,
// it loads the new run and puts it in service, keeping the old one if the
// load fails. Its generation makes a check that finds nothing new one
// metadata read. For a run directory, which has no published.json, checks
// find nothing to do.
type Reloader struct {
	src  string // --run as given
	pub  string // src's published.json
	load LoadFunc
	log  *slog.Logger
	// Srv is the server whose index Check swaps; set it before the first
	// Check.
	Srv *Server

	gen    int64  // generation of published.json last acted on
	run    string // the run it named
	failed int64  // generation whose run failed to load
}

// NewReloader returns a reloader of src's published.json.
func NewReloader(src string, load LoadFunc, log *slog.Logger) *Reloader {
	return &Reloader{src: src, pub: published.Path(src), load: load, log: log}
}

// Open loads src for the first time, to make the server with. The
// published run it found is remembered, so that the first Check does not
// load it again.
func (r *Reloader) Open(ctx context.Context) (Index, error) {
	gen, pub, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := r.load(ctx, r.src)
	if err != nil {
		return nil, err
	}
	r.gen, r.run = gen, pub.Run
	return ix, nil
}

// read returns published.json's generation and content; zeros if there is
// none (src is a run directory).
func (r *Reloader) read(ctx context.Context) (int64, published.Run, error) {
	gen, err := blob.Generation(ctx, r.pub)
	if err != nil || gen == 0 {
		return 0, published.Run{}, err
	}
	pub, gen, err := published.Read(ctx, r.src)
	if err != nil {
		return 0, published.Run{}, err
	}
	return gen, pub, nil
}

// Check re-reads published.json and, if it names another run than the one
// in service, loads it and swaps it in. It reports whether it swapped; an
// error leaves the old index in service. A publish whose run failed to load
// is tried again only when forced (SIGHUP) or published anew: loading a
// large index costs minutes and a second index's memory, too much to spend
// every interval on a broken run. Checks must not run concurrently (Watch
// runs them one at a time).
func (r *Reloader) Check(ctx context.Context, force bool) (bool, error) {
	gen, err := blob.Generation(ctx, r.pub)
	if err != nil {
		r.Srv.metrics.reloadKO.Add(1)
		return false, fmt.Errorf("checking %s: %w", r.pub, err)
	}
	if gen == 0 || gen == r.gen || (gen == r.failed && !force) {
		return false, nil
	}
	gen, pub, err := r.read(ctx)
	if err != nil {
		r.Srv.metrics.reloadKO.Add(1)
		return false, fmt.Errorf("reading %s: %w", r.pub, err)
	}
	run := pub.Run
	if run == r.run {
		r.gen = gen // republished, same run
		return false, nil
	}
	start := time.Now()
	ix, err := r.load(ctx, r.src)
	if err != nil {
		r.Srv.metrics.reloadKO.Add(1)
		r.failed = gen
		return false, fmt.Errorf("loading run %s: %w", run, err)
	}
	old := r.Srv.Index().Run()
	r.Srv.SetIndex(ix)
	r.Srv.metrics.reloadOK.Add(1)
	r.gen, r.run = gen, run
	r.log.Info("new run in service", "run", ix.Run(), "previous", old, "images", ix.Images(),
		"memory_bytes", ix.MemoryBytes(), "load_seconds", time.Since(start).Seconds())
	return true, nil
}

// Watch checks every interval (never if interval ≤ 0) and whenever hup
// delivers, until ctx is done. A failed check is counted, and logged once
// for as long as it fails the same way (a garbage published.json fails at
// every tick until it is republished), with the run still in service; the
// index in service stays.
func (r *Reloader) Watch(ctx context.Context, interval time.Duration, hup <-chan struct{}) {
	var lastErr string
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		force := false
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-hup:
			r.log.Info("reload asked for", "published", r.pub)
			force = true
		}
		_, err := r.Check(ctx, force)
		switch {
		case err == nil:
			if lastErr != "" {
				r.log.Info(published.Name+" checks succeed again", "serving", r.Srv.Index().Run())
			}
			lastErr = ""
		case ctx.Err() != nil:
		case err.Error() != lastErr || force:
			lastErr = err.Error()
			r.log.Error("reload failed; the run in service stays (logged once until the error changes)", "serving", r.Srv.Index().Run(), "err", err)
		}
	}
}
