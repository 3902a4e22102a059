package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/published"
)

// publisher publishes runs under a temporary root as the nightly job does,
// and loads them as fakes: the run named "runs/broken-…" fails to load.
type publisher struct {
	t     *testing.T
	root  string
	gen   int64
	loads atomic.Int32
}

func newPublisher(t *testing.T) *publisher { return &publisher{t: t, root: t.TempDir()} }

func (p *publisher) publish(id string) {
	p.t.Helper()
	r := published.Run{Run: published.RunsDir + "/" + id, PublishedAt: time.Now(), ServingLearner: "solis-ada"}
	if err := published.Publish(context.Background(), p.root, r, p.gen); err != nil {
		p.t.Fatal(err)
	}
	_, gen, err := published.Read(context.Background(), p.root)
	if err != nil {
		p.t.Fatal(err)
	}
	p.gen = gen
}

func (p *publisher) load(ctx context.Context, src string) (Index, error) {
	p.loads.Add(1)
	r, err := published.ReadPublished(ctx, src)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(r.ID(), "broken") {
		return nil, fmt.Errorf("run %s: a corrupt index file", r.Run)
	}
	return newFake(r.Run, 30), nil
}

func TestReload(t *testing.T) {
	ctx := context.Background()
	p := newPublisher(t)
	p.publish("night-1")
	rl := NewReloader(p.root, p.load, quietLog(t))
	ix, err := rl.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ix, testConfig(), quietLog(t))
	rl.Srv = s
	check := func(force, wantSwap bool, wantRun string) {
		t.Helper()
		swapped, err := rl.Check(ctx, force)
		if swapped != wantSwap || s.Index().Run() != wantRun {
			t.Fatalf("check: swapped %v (%v), run %s; want %v, %s", swapped, err, s.Index().Run(), wantSwap, wantRun)
		}
	}

	check(false, false, "runs/night-1") // nothing new: no load
	if n := p.loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
	p.publish("night-1") // republished: a new generation, the same run
	check(false, false, "runs/night-1")
	p.publish("night-2")
	check(false, true, "runs/night-2")

	// A run that fails to load leaves the old one in service, counted, and
	// is tried again only when forced or published anew.
	p.publish("broken-3")
	before := p.loads.Load()
	if swapped, err := rl.Check(ctx, false); swapped || err == nil || !strings.Contains(err.Error(), "corrupt index") {
		t.Fatalf("broken run: swapped %v, %v", swapped, err)
	}
	check(false, false, "runs/night-2")
	if n := p.loads.Load() - before; n != 1 {
		t.Fatalf("the broken run was loaded %d times without SIGHUP, want 1", n)
	}
	rl.Check(ctx, true)
	if n := p.loads.Load() - before; n != 2 {
		t.Fatalf("the broken run was loaded %d times after SIGHUP, want 2", n)
	}
	p.publish("night-4")
	check(false, true, "runs/night-4")
	if ok, ko := s.metrics.reloadOK.Load(), s.metrics.reloadKO.Load(); ok != 2 || ko != 2 {
		t.Fatalf("reloads counted: %d ok, %d failed; want 2, 2", ok, ko)
	}
	w := do(s, "GET", "/metrics", nil)
	for _, line := range []string{
		`bowline_serve_reloads_total{result="ok"} 2`,
		`bowline_serve_reloads_total{result="failed"} 2`,
		`bowline_serve_run_info{run="runs/night-4"} 1`,
		`bowline_serve_index_images 30`,
		`bowline_serve_index_memory_bytes 3000`,
	} {
		if !strings.Contains(w.Body.String(), line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}

	// Watch: SIGHUP (the channel) makes it check at once.
	wctx, cancel := context.WithCancel(ctx)
	hup := make(chan struct{})
	done := make(chan struct{})
	go func() { rl.Watch(wctx, time.Hour, hup); close(done) }()
	p.publish("night-5")
	hup <- struct{}{}
	for deadline := time.Now().Add(5 * time.Second); s.Index().Run() != "runs/night-5"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no swap after SIGHUP: %s", s.Index().Run())
		}
	}
	cancel()
	<-done
}

// TestHotSwap queries from many goroutines, over HTTP, while the published
// run changes several times: every request must succeed, and a request
// that started on one index finishes on it.
func TestHotSwap(t *testing.T) {
	ctx := context.Background()
	p := newPublisher(t)
	p.publish("night-0")
	rl := NewReloader(p.root, p.load, quietLog(t))
	ix, err := rl.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.MaxInflight = 64
	s := NewServer(ix, cfg, quietLog(t))
	rl.Srv = s
	ts := httptest.NewServer(s)
	defer ts.Close()
	id := ix.(*fakeIndex).ids[7]

	const workers, swaps = 16, 6
	stop := make(chan struct{})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		runs = map[string]int{}
		errs []string
		n    atomic.Int64
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(ts.URL + "/v1/search?k=5&image_id=" + id)
				var r SearchResponse
				if err == nil {
					err = json.NewDecoder(resp.Body).Decode(&r)
					resp.Body.Close()
					if err == nil && (resp.StatusCode != 200 || len(r.Results) != 5) {
						err = fmt.Errorf("status %d, %d results", resp.StatusCode, len(r.Results))
					}
				}
				n.Add(1)
				mu.Lock()
				if err != nil {
					errs = append(errs, err.Error())
				} else {
					runs[r.Run]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := 1; i <= swaps; i++ {
		time.Sleep(30 * time.Millisecond)
		p.publish(fmt.Sprintf("night-%d", i))
		if ok, err := rl.Check(ctx, false); !ok {
			t.Fatalf("swap %d: %v", i, err)
		}
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed, first: %s", len(errs), n.Load(), errs[0])
	}
	if len(runs) < 3 {
		t.Fatalf("requests saw runs %v: the swaps did not interleave with them", runs)
	}
	t.Logf("%d requests, all 200, by run: %v", n.Load(), runs)

	// A request in flight during a swap finishes on its own index.
	old := newFake("runs/old", 10)
	entered, release := make(chan struct{}), make(chan struct{})
	old.entered, old.release = entered, release
	s.SetIndex(old)
	got := make(chan SearchResponse)
	go func() {
		var r SearchResponse
		resp, err := http.Get(ts.URL + "/v1/search?image_id=" + old.ids[0])
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
		}
		got <- r
	}()
	<-entered
	s.SetIndex(newFake("runs/new", 10))
	close(release)
	if r := <-got; r.Run != "runs/old" || len(r.Results) != DefaultK {
		t.Fatalf("the request in flight answered %+v, want run runs/old", r)
	}
}

// TestGracefulShutdown cancels Serve's context with a request in flight:
// the request finishes, new connections are refused, Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	f := newFake("runs/a", 10)
	entered, release := make(chan struct{}), make(chan struct{})
	f.entered, f.release = entered, release
	s := NewServer(f, testConfig(), quietLog(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- Serve(ctx, ln, s, time.Second, 10*time.Second) }()

	type answer struct {
		status int
		body   SearchResponse
		err    error
	}
	got := make(chan answer)
	go func() {
		var a answer
		resp, err := http.Get(url + "/v1/search?image_id=" + f.ids[2])
		if err == nil {
			a.status = resp.StatusCode
			a.err = json.NewDecoder(resp.Body).Decode(&a.body)
			resp.Body.Close()
		}
		a.err = errors.Join(a.err, err)
		got <- a
	}()
	<-entered
	cancel()
	// Shutdown closes the listener first: a new connection is refused.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after shutdown began")
		}
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if a := <-got; a.err != nil || a.status != 200 || len(a.body.Results) != DefaultK {
		t.Fatalf("the request in flight: %d %+v %v", a.status, a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
