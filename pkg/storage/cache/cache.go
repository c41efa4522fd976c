// Package cache persists the computed outputs in an embedded bbolt database
// so that a restarted server serves the same objects and resourceVersions
// before its first recomputation.
//
// Layout of the file:
//
//	bucket "header":   "magic" = Magic, "format" = the caller's format,
//	                   "epoch" = the epoch of the file's history (decimal, see
//	                   pkg/storage/resourceversion)
//	bucket "rv":       <resource> = resourceVersion of that resource's store (decimal)
//	bucket <resource>: "<namespace>/<name>" = the object, in the caller's format
//
// The values are opaque here: their format, and its version, belong to the
// package that writes them (for the server, encoded.CacheFormat, next to the
// code of the format and pinned by its golden test). The version names the
// file as a whole: a change of the layout above must bump it too, so that
// older files are rebuilt rather than misread.
//
// A file that bbolt cannot open, that lacks the header, carries another magic
// or format, or holds an object the caller cannot decode is moved aside (to
// <file>.corrupt) and replaced by a fresh one: it is never served.
//
// Every new file gets a new random epoch; resourceVersions of the stores
// restored from it are of that epoch (pkg/storage/resourceversion), so
// resourceVersions of another replica or of a discarded file are told apart
// from this file's. A stored resourceVersion of another epoch makes the file
// corrupt.
package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

const (
	// FileName is the name of the database file inside the cache directory.
	FileName = "effectivepolicy.db"
	// Magic identifies a file written by this server.
	Magic = "effectivepolicy.dev/output-cache"
)

var (
	headerBucket = []byte("header")
	rvBucket     = []byte("rv")
)

// Entry is one stored object.
type Entry struct {
	// Key is "<namespace>/<name>" ("/<name>" for cluster-scoped objects).
	Key string
	// Data is the JSON of the object; nil deletes the key.
	Data []byte
}

// Resource is what one resource holds: its objects and its resourceVersion.
type Resource struct {
	Entries         []Entry
	ResourceVersion uint64
}

// DecodeFunc checks (and may keep) one stored object while the file is
// validated. An error marks the whole file as corrupt.
type DecodeFunc func(resource string, e Entry) error

// DB is an open, validated cache file.
type DB struct {
	db        *bolt.DB
	format    string
	resources []string
	epoch     uint32
}

// Epoch returns the epoch of the file's history: chosen at random when the
// file was created, the same on every later Open.
func (d *DB) Epoch() uint32 { return d.epoch }

// Open opens (creating if needed) dir/FileName for the given resources and
// values of the given format, validating it: a file of another format is
// discarded, every stored object is handed to decode. A file that fails
// validation is moved aside and replaced by an empty one; discarded then says
// why. An error is returned only when no usable file can be had at all (the
// directory cannot be created or written, the file is locked by another
// process, ...): the caller should then run without persistence.
func Open(dir, format string, resources []string, decode DecodeFunc) (db *DB, loaded map[string]Resource, discarded error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("creating cache directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, loaded, _, err = openValidated(path, format, resources, decode)
	if err == nil {
		return db, loaded, nil, nil
	}
	if !isCorrupt(err) {
		return nil, nil, nil, err
	}
	discarded = err
	if rerr := os.Rename(path, path+".corrupt"); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			return nil, nil, discarded, fmt.Errorf("removing corrupt cache file: %w", rmErr)
		}
	}
	db, loaded, _, err = openValidated(path, format, resources, decode)
	if err != nil {
		return nil, nil, discarded, err
	}
	return db, loaded, discarded, nil
}

// corruptError marks errors that make a file unusable, as opposed to errors
// of the environment (permissions, locks, full disk).
type corruptError struct{ err error }

func (e corruptError) Error() string { return "corrupt or incompatible cache file: " + e.err.Error() }
func (e corruptError) Unwrap() error { return e.err }

func isCorrupt(err error) bool {
	var c corruptError
	return errors.As(err, &c)
}

func openValidated(path, format string, resources []string, decode DecodeFunc) (_ *DB, _ map[string]Resource, _ error, err error) {
	_, statErr := os.Stat(path)
	existed := statErr == nil
	var bdb *bolt.DB
	// A page beyond the end of a truncated file faults in the mmap; make
	// that a recoverable panic of this goroutine instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		// bbolt may panic on pages it cannot make sense of (a truncated
		// file, say), in Open as well as in reads. On a panic in Open the
		// file descriptor leaks; the file is then moved aside anyway.
		if r := recover(); r != nil {
			err = corruptError{fmt.Errorf("panic while reading: %v", r)}
		}
		if err != nil && bdb != nil {
			_ = bdb.Close()
		}
	}()
	bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) || errors.Is(err, os.ErrPermission) || !existed {
			return nil, nil, nil, fmt.Errorf("opening cache file: %w", err)
		}
		return nil, nil, nil, corruptError{err}
	}
	db := &DB{db: bdb, format: format, resources: resources}
	loaded, err := db.validate(decode)
	if err != nil {
		return nil, nil, nil, err
	}
	return db, loaded, nil, nil
}

// validate checks the file's header (initializing a brand-new file) and loads every stored
// resource, handing each entry to decode.
func (d *DB) validate(decode DecodeFunc) (map[string]Resource, error) {
	var empty bool
	if err := d.db.View(func(tx *bolt.Tx) (err error) {
		empty, err = d.readHeader(tx)
		return err
	}); err != nil {
		return nil, err
	}
	if empty {
		if err := d.initialize(); err != nil {
			return nil, fmt.Errorf("initializing cache file: %w", err)
		}
	}
	loaded := map[string]Resource{}
	err := d.db.View(func(tx *bolt.Tx) error {
		rvs := tx.Bucket(rvBucket)
		if rvs == nil {
			return corruptError{errors.New("no rv bucket")}
		}
		for _, r := range d.resources {
			res, err := d.loadResource(tx, rvs, r, decode)
			if err != nil {
				return err
			}
			loaded[r] = res
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loaded, nil
}

// readHeader checks the header bucket and reads the epoch; empty says the file has no
// bucket at all and must be initialized.
func (d *DB) readHeader(tx *bolt.Tx) (empty bool, err error) {
	fi, err := os.Stat(d.db.Path())
	if err != nil {
		return false, err
	}
	if tx.Size() > fi.Size() {
		return false, corruptError{fmt.Errorf("truncated: %d bytes in use, file has %d", tx.Size(), fi.Size())}
	}
	h := tx.Bucket(headerBucket)
	if h == nil {
		// A brand-new file (or one with no bucket at all) is initialized;
		// a file with other buckets belongs to someone else.
		n := 0
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { n++; return nil })
		if n > 0 {
			return false, corruptError{errors.New("no header bucket (foreign bbolt file)")}
		}
		return true, nil
	}
	if m := string(h.Get([]byte("magic"))); m != Magic {
		return false, corruptError{fmt.Errorf("unknown magic %q", m)}
	}
	if f := string(h.Get([]byte("format"))); f != d.format {
		return false, corruptError{fmt.Errorf("unsupported format version %q (want %q)", f, d.format)}
	}
	e, err := resourceversion.ParseEpoch(string(h.Get([]byte("epoch"))))
	if err != nil {
		return false, corruptError{err}
	}
	d.epoch = e
	return false, nil
}

// initialize writes the header of a new epoch and the empty buckets.
func (d *DB) initialize() error {
	epoch := resourceversion.NewEpoch()
	if err := d.db.Update(func(tx *bolt.Tx) error {
		h, err := tx.CreateBucketIfNotExists(headerBucket)
		if err != nil {
			return err
		}
		for _, kv := range [][2]string{{"magic", Magic}, {"format", d.format}, {"epoch", resourceversion.FormatEpoch(epoch)}} {
			if err := h.Put([]byte(kv[0]), []byte(kv[1])); err != nil {
				return err
			}
		}
		for _, b := range append([]string{string(rvBucket)}, d.resources...) {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	d.epoch = epoch
	return nil
}

// loadResource reads resource r: its resourceVersion (of the file's epoch) and its entries.
func (d *DB) loadResource(tx *bolt.Tx, rvs *bolt.Bucket, r string, decode DecodeFunc) (Resource, error) {
	var res Resource
	b := tx.Bucket([]byte(r))
	if b == nil {
		return res, corruptError{fmt.Errorf("no bucket for %s", r)}
	}
	if raw := rvs.Get([]byte(r)); raw != nil {
		rv, err := resourceversion.Parse(string(raw))
		if err != nil {
			return res, corruptError{fmt.Errorf("resourceVersion of %s: %w", r, err)}
		}
		if resourceversion.EpochOf(rv) != d.epoch {
			return res, corruptError{fmt.Errorf("resourceVersion %d of %s is not of the file's epoch %d", rv, r, d.epoch)}
		}
		res.ResourceVersion = rv
	}
	err := b.ForEach(func(k, v []byte) error {
		if v == nil {
			return corruptError{fmt.Errorf("%s: nested bucket %q", r, k)}
		}
		e := Entry{Key: string(k), Data: append([]byte(nil), v...)}
		if decode != nil {
			if err := decode(r, e); err != nil {
				return corruptError{fmt.Errorf("%s %q: %w", r, k, err)}
			}
		}
		res.Entries = append(res.Entries, e)
		return nil
	})
	return res, err
}

// Batch is one write: per resource, the entries in the order they were
// applied and the store's resourceVersion after them.
type Batch map[string]Resource

// Write stores a batch in one transaction. With replace, each resource
// named in the batch is emptied first (used to rewrite a full snapshot after
// a failed write).
func (d *DB) Write(b Batch, replace bool) error {
	return d.db.Update(func(tx *bolt.Tx) error { return writeTx(tx, b, replace) })
}

func writeTx(tx *bolt.Tx, b Batch, replace bool) error {
	rvs := tx.Bucket(rvBucket)
	for r, res := range b {
		if replace {
			if err := tx.DeleteBucket([]byte(r)); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
		}
		bk, err := tx.CreateBucketIfNotExists([]byte(r))
		if err != nil {
			return err
		}
		for _, e := range res.Entries {
			if e.Data == nil {
				err = bk.Delete([]byte(e.Key))
			} else {
				err = bk.Put([]byte(e.Key), e.Data)
			}
			if err != nil {
				return err
			}
		}
		if err := rvs.Put([]byte(r), []byte(resourceversion.Format(res.ResourceVersion))); err != nil {
			return err
		}
	}
	return nil
}

// Reset makes the file hold exactly b, in the history of epoch: the header
// takes epoch, every resource of the file is emptied, then b is written, all
// in one transaction, so a failure leaves the file as it was. It adopts a file opened after the caller's stores
// already serve a history of their own (the cache directory was unusable at
// start and became usable later): whatever the file held is not that history
// and must not be restored from it.
func (d *DB) Reset(epoch uint32, b Batch) error {
	if !resourceversion.ValidEpoch(uint64(epoch)) {
		return fmt.Errorf("invalid epoch %d", epoch)
	}
	for r, res := range b {
		if resourceversion.EpochOf(res.ResourceVersion) != epoch {
			return fmt.Errorf("resourceVersion %d of %s is not of epoch %d", res.ResourceVersion, r, epoch)
		}
	}
	err := d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(headerBucket).Put([]byte("epoch"), []byte(resourceversion.FormatEpoch(epoch))); err != nil {
			return err
		}
		rvs := tx.Bucket(rvBucket)
		for _, r := range d.resources {
			if err := tx.DeleteBucket([]byte(r)); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
			if _, err := tx.CreateBucket([]byte(r)); err != nil {
				return err
			}
			if err := rvs.Delete([]byte(r)); err != nil {
				return err
			}
		}
		return writeTx(tx, b, false)
	})
	if err != nil {
		return err
	}
	d.epoch = epoch
	return nil
}

// Path returns the file's path.
func (d *DB) Path() string { return d.db.Path() }

// Close closes the file.
func (d *DB) Close() error { return d.db.Close() }
