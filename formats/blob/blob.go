// Package blob reads and writes whole objects by path — a local file or
// gs://bucket/object — without Beam, for the programs that run outside a
// pipeline: the nightly publisher and the query service. Pipelines read and
// write through formats/fileio, which goes through Beam's file systems; this
// package talks to Cloud Storage with its own client because publishing
// needs what Beam's file systems do not offer: object generations and
// conditional writes.
//
// A generation identifies one version of an object: Cloud Storage's object
// generation, or for a local file a number derived from its modification
// time and size. WriteIf writes only if the object is still at the
// generation the caller read (0: only if it does not exist), so that of two
// writers that read the same version exactly one succeeds; the other gets
// ErrPrecondition.
//
// Locally, a lock file beside the object (path + ".lock") serialises
// conditional writes across processes; it records its owner (host, process
// and time). A writer waits up to LockWait for another's lock; a lock left
// by a killed writer (ErrStaleLock) or held far longer than a write holds
// it (ErrLocked) stops it with the command that removes the file, and is
// never taken for a change of the object (ErrPrecondition), which only a
// changed generation is. Cloud Storage needs no lock: its writes are
// conditional on the generation themselves, so a precondition failure
// there, as here, means that the object changed.
// Local files are created with mode 0666 less the umask, as os.Create
// makes them.
//
// STORAGE_EMULATOR_HOST, when set, points the client at an emulator, as it
// does for the Cloud Storage library.
package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
)

// ErrPrecondition is returned by WriteIf when the object is no longer at
// the generation the caller expected.
var ErrPrecondition = errors.New("the object changed since it was read")

// ErrNotExist is returned (wrapped) when an object does not exist; it is
// fs.ErrNotExist, so errors.Is(err, fs.ErrNotExist) holds too.
var ErrNotExist = fs.ErrNotExist

// IsRemote reports whether path is a gs:// URL rather than a local path.
func IsRemote(path string) bool { return strings.HasPrefix(path, "gs://") }

// Join joins a directory (local or gs://) and a relative name.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	if !IsRemote(dir) {
		return filepath.Join(dir, name)
	}
	return strings.TrimRight(dir, "/") + "/" + strings.TrimLeft(name, "/")
}

// Read returns the object's content and its generation.
func Read(ctx context.Context, path string) (data []byte, gen int64, err error) {
	if !IsRemote(path) {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, fmt.Errorf("blob: read %s: %w", path, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, 0, fmt.Errorf("blob: read %s: %w", path, err)
		}
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, 0, fmt.Errorf("blob: read %s: %w", path, err)
		}
		return data, localGen(st), nil
	}
	obj, err := object(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("blob: read %s: %w", path, gcsErr(err))
	}
	defer r.Close()
	data, err = io.ReadAll(r)
	if err != nil {
		return nil, 0, fmt.Errorf("blob: read %s: %w", path, err)
	}
	return data, r.Attrs.Generation, nil
}

// Generation returns the object's current generation, 0 if it does not
// exist.
func Generation(ctx context.Context, path string) (int64, error) {
	if !IsRemote(path) {
		st, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("blob: stat %s: %w", path, err)
		}
		return localGen(st), nil
	}
	obj, err := object(ctx, path)
	if err != nil {
		return 0, err
	}
	attrs, err := obj.Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("blob: stat %s: %w", path, err)
	}
	return attrs.Generation, nil
}

// Write writes data to path whole: a reader sees the old content or the
// new, never part of it.
func Write(ctx context.Context, path string, data []byte) error {
	return write(ctx, path, data, -1)
}

// WriteIf writes data to path, as Write does, only if the object is at
// generation gen (0: does not exist); otherwise it returns an error
// wrapping ErrPrecondition and leaves the object alone. A local path's
// lock that stops the write is an error wrapping ErrStaleLock or
// ErrLocked, and ErrPrecondition too only if the object did change.
func WriteIf(ctx context.Context, path string, data []byte, gen int64) error {
	if gen < 0 {
		panic(fmt.Sprintf("blob: WriteIf %s: generation %d", path, gen))
	}
	return write(ctx, path, data, gen)
}

// write writes data; gen < 0 writes unconditionally.
func write(ctx context.Context, path string, data []byte, gen int64) error {
	if !IsRemote(path) {
		if err := writeLocal(ctx, path, data, gen); err != nil {
			return fmt.Errorf("blob: write %s: %w", path, err)
		}
		return nil
	}
	obj, err := object(ctx, path)
	if err != nil {
		return err
	}
	switch {
	case gen == 0:
		obj = obj.If(storage.Conditions{DoesNotExist: true})
	case gen > 0:
		obj = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := obj.NewWriter(ctx)
	w.ContentType = contentType(path)
	if _, err := w.Write(data); err != nil {
		cancel() // aborts the upload: the object keeps its old content
		w.Close()
		return fmt.Errorf("blob: write %s: %w", path, gcsErr(err))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("blob: write %s: %w", path, gcsErr(err))
	}
	return nil
}

// localLocks serialises conditional local writes within the process; a
// lock file serialises them across processes.
var localLocks sync.Mutex

func writeLocal(ctx context.Context, path string, data []byte, gen int64) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if gen >= 0 {
		localLocks.Lock()
		defer localLocks.Unlock()
		release, lockErr := takeLock(ctx, path)
		if lockErr == nil {
			defer release()
		}
		cur, err := Generation(ctx, path)
		switch {
		case err != nil:
			return errors.Join(lockErr, err)
		case cur != gen && lockErr != nil:
			// The object did change: that is what the writer is told, the
			// lock that stops the next write besides.
			return fmt.Errorf("%w: generation %d, expected %d (and %w)", ErrPrecondition, cur, gen, lockErr)
		case lockErr != nil:
			return lockErr
		case cur != gen:
			return fmt.Errorf("%w: generation %d, expected %d", ErrPrecondition, cur, gen)
		}
	}
	tmp, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// createTemp creates a new file in dir for the content of the file name:
// as os.CreateTemp does, but with mode 0666 less the umask, as os.Create
// and the job's other files have, where os.CreateTemp's 0600 would keep
// published.json from a reader running as another user.
func createTemp(dir, name string) (*os.File, error) {
	for range 100 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		p := filepath.Join(dir, ".tmp-"+hex.EncodeToString(b[:])+"-"+name)
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no free temporary name for %s in %s", name, dir)
}

// localGen is a local file's generation: its modification time in
// nanoseconds mixed with its size, never 0.
func localGen(st fs.FileInfo) int64 {
	g := st.ModTime().UnixNano()*31 + st.Size()
	if g <= 0 {
		g = -g + 1
	}
	return g
}

// List returns the paths of the objects under the directory dir (for a
// local directory, its regular files, recursively), sorted.
func List(ctx context.Context, dir string) ([]string, error) {
	if !IsRemote(dir) {
		var out []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("blob: list %s: %w", dir, err)
		}
		sort.Strings(out)
		return out, nil
	}
	bucket, prefix, err := parse(dir)
	if err != nil {
		return nil, err
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	c, err := client(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	it := c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix})
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("blob: list %s: %w", dir, err)
		}
		out = append(out, "gs://"+bucket+"/"+attrs.Name)
	}
	sort.Strings(out)
	return out, nil
}

// RemoveAll removes the directory dir and everything under it. A missing
// directory is not an error.
func RemoveAll(ctx context.Context, dir string) error {
	if !IsRemote(dir) {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("blob: remove %s: %w", dir, err)
		}
		return nil
	}
	paths, err := List(ctx, dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		obj, err := object(ctx, p)
		if err != nil {
			return err
		}
		if err := obj.Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
			return fmt.Errorf("blob: remove %s: %w", p, err)
		}
	}
	return nil
}

func contentType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return "application/json"
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}

// NotExist returns err, but a missing GCS object's error wrapping
// ErrNotExist (fs.ErrNotExist), as a missing local file's does: callers
// tell a file that is not there from one that cannot be read the same way
// for both. It is the one place the storage library's "not found" is
// mapped, for this package and for formats/fileio.
func NotExist(err error) error {
	if errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("%w (%v)", ErrNotExist, err)
	}
	return err
}

// gcsErr turns the storage library's answers into this package's errors.
func gcsErr(err error) error {
	if err = NotExist(err); errors.Is(err, ErrNotExist) {
		return err
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == 412 {
		return fmt.Errorf("%w (%v)", ErrPrecondition, err)
	}
	return err
}

// parse splits gs://bucket/object.
func parse(path string) (bucket, name string, err error) {
	rest, ok := strings.CutPrefix(path, "gs://")
	if !ok || rest == "" {
		return "", "", fmt.Errorf("blob: %q is not a gs:// path", path)
	}
	bucket, name, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("blob: %q has no bucket", path)
	}
	return bucket, name, nil
}

func object(ctx context.Context, path string) (*storage.ObjectHandle, error) {
	bucket, name, err := parse(path)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("blob: %q names a bucket, not an object", path)
	}
	c, err := client(ctx)
	if err != nil {
		return nil, err
	}
	return c.Bucket(bucket).Object(name), nil
}

// clients holds one storage client per emulator address ("" for the real
// service): a client reads STORAGE_EMULATOR_HOST when it is made, and
// tests point it at emulators of their own.
var clients struct {
	sync.Mutex
	m map[string]*storage.Client
}

func client(ctx context.Context) (*storage.Client, error) {
	host := os.Getenv("STORAGE_EMULATOR_HOST")
	clients.Lock()
	defer clients.Unlock()
	if c, ok := clients.m[host]; ok {
		return c, nil
	}
	c, err := storage.NewClient(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("blob: a Cloud Storage client: %w", err)
	}
	if clients.m == nil {
		clients.m = map[string]*storage.Client{}
	}
	clients.m[host] = c
	return c, nil
}
