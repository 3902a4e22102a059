// Command loadtest drives a running serve on this machine with searches by
// image id at rising concurrency and reports, for each step, requests per
// second, latency percentiles, errors and the server's resident memory;
// then the highest rate whose p99 stays within --p99:
//
//	go run ./cmd/serve --run /tmp/bowline-shapes --addr 127.0.0.1:8080 &
//	go run ./cmd/serve/loadtest --url http://127.0.0.1:8080 --image_id class0/img1.png
//
// The ids it queries are found from the seed (--image_id, or --image, a
// photo POSTed once) by following search results until --pool ids are
// known. Every step is bounded by --requests and --duration, and it stops
// rising once p99 passes --p99 or a request fails. Only loopback addresses
// are accepted as targets.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:8080", "the service's base URL (loopback only)")
	seedID := flag.String("image_id", "", "an indexed image id to start finding ids from")
	seedImage := flag.String("image", "", "a photo to start finding ids from (POSTed once), if no --image_id")
	pool := flag.Int("pool", 1000, "ids to query, found by following results from the seed")
	levels := flag.String("concurrency", "1,2,4,8,16,32", "concurrent clients of each step, rising")
	requests := flag.Int("requests", 5000, "most requests of one step")
	duration := flag.Duration("duration", 10*time.Second, "longest one step runs")
	k := flag.Int("k", 10, "results a search asks for")
	learner := flag.String("learner", "", "learner to search with (default: the service's)")
	p99 := flag.Duration("p99", 50*time.Millisecond, "latency the 99th percentile must stay within")
	flag.Parse()
	if err := run(*target, *seedID, *seedImage, *pool, *levels, *requests, *duration, *k, *learner, *p99); err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(1)
	}
}

func run(target, seedID, seedImage string, pool int, levels string, requests int, duration time.Duration, k int, learner string, limit time.Duration) error {
	base, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil {
		return err
	}
	if err := loopbackOnly(base); err != nil {
		return err
	}
	var conc []int
	for _, f := range strings.Split(levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return fmt.Errorf("--concurrency %q: want rising positive numbers", levels)
		}
		conc = append(conc, c)
	}
	if requests < 1 || duration <= 0 || pool < 1 {
		return errors.New("--requests, --duration and --pool must be positive")
	}
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: slices.Max(conc), MaxConnsPerHost: slices.Max(conc)},
	}
	lt := &loadTest{client: client, base: base.String(), k: k, learner: learner}

	var health struct {
		Run, Learner string
		Images       int
	}
	if err := lt.getJSON(base.String()+"/healthz", &health); err != nil {
		return err
	}
	ids, err := lt.findIDs(seedID, seedImage, pool)
	if err != nil {
		return err
	}
	rss0, _ := lt.rss()
	fmt.Printf("target %s: run %s, %d images, learner %s; %d ids to query, k=%d; server RSS %s\n",
		base, health.Run, health.Images, orDefault(learner, health.Learner), len(ids), k, mib(rss0))
	fmt.Printf("%6s %8s %6s %9s %8s %8s %8s %8s %10s\n", "conc", "requests", "errors", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "RSS")
	var best *step
	for _, c := range conc {
		st := lt.step(ids, c, requests, duration)
		rss, _ := lt.rss()
		fmt.Printf("%6d %8d %6d %9.0f %8.2f %8.2f %8.2f %8.2f %10s\n", c, st.n, st.errors, st.rate, ms(st.pct(50)), ms(st.pct(90)), ms(st.pct(99)), ms(st.pct(100)), mib(rss))
		if st.errors > 0 {
			fmt.Printf("first error: %s\n", st.firstErr)
			break
		}
		if st.pct(99) > limit {
			break
		}
		if best == nil || st.rate > best.rate {
			best = st
		}
	}
	rss1, _ := lt.rss()
	if best == nil {
		return fmt.Errorf("no step kept p99 within %v without errors; server RSS %s → %s", limit, mib(rss0), mib(rss1))
	}
	fmt.Printf("best: %.0f req/s at concurrency %d with p99 %.2f ms ≤ %v, 0 errors; server RSS %s before, %s after\n",
		best.rate, best.conc, ms(best.pct(99)), limit, mib(rss0), mib(rss1))
	return nil
}

// loopbackOnly refuses a target that is not on this machine.
func loopbackOnly(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%s: want an http:// URL", u)
	}
	host := u.Hostname()
	ips, err := net.LookupIP(host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s resolves to %s, not a loopback address: loadtest only targets this machine", host, ip)
		}
	}
	return nil
}

type loadTest struct {
	client  *http.Client
	base    string
	k       int
	learner string
}

func (lt *loadTest) searchURL(id string, k int) string {
	v := url.Values{"image_id": {id}, "k": {strconv.Itoa(k)}}
	if lt.learner != "" {
		v.Set("learner", lt.learner)
	}
	return lt.base + "/v1/search?" + v.Encode()
}

type searchResponse struct {
	Results []struct {
		ImageID string `json:"image_id"`
	} `json:"results"`
}

func (lt *loadTest) getJSON(u string, v any) error {
	resp, err := lt.client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, v)
}

// findIDs follows results from the seed, breadth first, until it knows
// want ids or finds no new one.
func (lt *loadTest) findIDs(seedID, seedImage string, want int) ([]string, error) {
	var frontier []string
	switch {
	case seedID != "":
		frontier = []string{seedID}
	case seedImage != "":
		data, err := os.ReadFile(seedImage)
		if err != nil {
			return nil, err
		}
		resp, err := lt.client.Post(lt.base+"/v1/search?k=100", "application/octet-stream", bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		var r searchResponse
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("searching with %s: %s %v", seedImage, resp.Status, err)
		}
		for _, h := range r.Results {
			frontier = append(frontier, h.ImageID)
		}
	default:
		return nil, errors.New("give --image_id or --image to find ids from")
	}
	seen := map[string]bool{}
	var ids []string
	for len(frontier) > 0 && len(ids) < want {
		id := frontier[0]
		frontier = frontier[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		var r searchResponse
		if err := lt.getJSON(lt.searchURL(id, 100), &r); err != nil {
			return nil, err
		}
		for _, h := range r.Results {
			if !seen[h.ImageID] {
				frontier = append(frontier, h.ImageID)
			}
		}
	}
	return ids, nil
}

// rss reads the server's resident memory from its metrics.
func (lt *loadTest) rss() (int64, error) {
	resp, err := lt.client.Get(lt.base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("the server's metrics have no process_resident_memory_bytes")
}

// step is one concurrency level's measurements.
type step struct {
	conc, n, errors int
	rate            float64
	lat             []time.Duration // sorted
	firstErr        string
}

// pct returns the p-th percentile latency (nearest rank).
func (s *step) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	i := int(p/100*float64(len(s.lat))+0.5) - 1
	return s.lat[min(max(i, 0), len(s.lat)-1)]
}

// step runs conc clients until n requests were sent or d passed.
func (lt *loadTest) step(ids []string, conc, n int, d time.Duration) *step {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu   sync.Mutex
		st   = &step{conc: conc}
		next = make(chan int)
		wg   sync.WaitGroup
	)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			lat := make([]time.Duration, 0, n/conc+1)
			var errs int
			var first string
			for range next {
				u := lt.searchURL(ids[rng.IntN(len(ids))], lt.k)
				t0 := time.Now()
				err := lt.fetch(u)
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			st.lat = append(st.lat, lat...)
			st.errors += errs
			if st.firstErr == "" {
				st.firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(st.lat)
	st.n = len(st.lat)
	st.rate = float64(st.n) / elapsed.Seconds()
	return st
}

// fetch GETs u and checks that it answered 200 with results.
func (lt *loadTest) fetch(u string) error {
	resp, err := lt.client.Get(u)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"results":[{`)) {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
