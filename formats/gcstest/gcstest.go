// Package gcstest runs fake-gcs-server inside a test, as a real HTTP server
// on 127.0.0.1, so that code using gs:// paths through Beam's gcs file system
// (or any cloud.google.com/go/storage client) can be tested offline.
package gcstest

import (
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Start starts an in-memory GCS emulator holding the given (empty) buckets,
// points STORAGE_EMULATOR_HOST at it for the rest of the test (t.Setenv, so
// the test must not be parallel) and stops it when the test ends. It returns
// the emulator's host:port.
//
// Beam's gcs file system creates a storage client on every filesystem.New,
// and the storage client reads STORAGE_EMULATOR_HOST when it is created, so
// everything in the test process, including pipelines on an in-process Prism
// runner, talks to the emulator.
func Start(t testing.TB, buckets ...string) (host string) {
	t.Helper()
	var (
		srv *fakestorage.Server
		err error
	)
	// The emulator needs its public host (its own address) before it
	// listens, so pick a free port first; retry if another process takes it
	// in between.
	for range 5 {
		var port uint16
		port, err = freePort()
		if err != nil {
			continue
		}
		host = fmt.Sprintf("127.0.0.1:%d", port)
		srv, err = fakestorage.NewServerWithOptions(fakestorage.Options{
			Scheme:     "http",
			Host:       "127.0.0.1",
			Port:       port,
			PublicHost: host,
			Writer:     io.Discard,
		})
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("gcstest: starting fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	for _, b := range buckets {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return host
}

func freePort() (uint16, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port), nil
}
