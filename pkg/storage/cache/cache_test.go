package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

var resources = []string{"effectivepolicies", "clustereffectivepolicies"}

// format is the values' format of the files of these tests.
const format = "4"

func mustOpen(t *testing.T, dir string, decode DecodeFunc) (*DB, map[string]Resource, error) {
	t.Helper()
	db, loaded, discarded, err := Open(dir, format, resources, decode)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, loaded, discarded
}

// rv is the resourceVersion of counter n in db's epoch.
func rv(db *DB, n uint64) uint64 { return resourceversion.Make(db.Epoch(), n) }

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db, loaded, discarded := mustOpen(t, dir, nil)
	if discarded != nil || len(loaded["effectivepolicies"].Entries) != 0 {
		t.Fatalf("fresh file: discarded=%v loaded=%v", discarded, loaded)
	}
	if err := db.Write(Batch{
		"effectivepolicies":        {Entries: []Entry{{Key: "a/x", Data: []byte(`{"x":1}`)}, {Key: "a/y", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 7)},
		"clustereffectivepolicies": {Entries: []Entry{{Key: "/gc", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 3)},
	}, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/y"}}, ResourceVersion: rv(db, 8)}}, false); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, loaded, discarded = mustOpen(t, dir, nil)
	if discarded != nil {
		t.Fatal(discarded)
	}
	ep := loaded["effectivepolicies"]
	if ep.ResourceVersion != rv(db, 8) || len(ep.Entries) != 1 || ep.Entries[0].Key != "a/x" || string(ep.Entries[0].Data) != `{"x":1}` {
		t.Errorf("effectivepolicies = %+v", ep)
	}
	if c := loaded["clustereffectivepolicies"]; c.ResourceVersion != rv(db, 3) || len(c.Entries) != 1 {
		t.Errorf("clustereffectivepolicies = %+v", c)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	db, _, _ := mustOpen(t, dir, nil)
	_ = db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/x", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 1)}}, false)
	_ = db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/z", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 5)}}, true)
	_ = db.Close()
	_, loaded, _ := mustOpen(t, dir, nil)
	if ep := loaded["effectivepolicies"]; len(ep.Entries) != 1 || ep.Entries[0].Key != "a/z" || ep.ResourceVersion != rv(db, 5) {
		t.Errorf("after replace: %+v", ep)
	}
}

func writeValid(t *testing.T, dir string) {
	t.Helper()
	db, _, _, err := Open(dir, format, resources, nil)
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	for i := 0; i < 200; i++ {
		entries = append(entries, Entry{Key: "ns/" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Data: []byte(`{"metadata":{"name":"x"}}`)})
	}
	if err := db.Write(Batch{"effectivepolicies": {Entries: entries, ResourceVersion: rv(db, 42)}}, false); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
}

func TestCorruptFilesAreDiscarded(t *testing.T) {
	for _, tt := range corruptFileCases() {
		t.Run(tt.name, func(t *testing.T) { checkCorruptFileDiscarded(t, tt) })
	}
}

// corruptFileCase: prepare spoils the cache file at path; decode, when set,
// is the one the file is opened with.
type corruptFileCase struct {
	name    string
	prepare func(t *testing.T, path string)
	decode  DecodeFunc
}

func corruptFileCases() []corruptFileCase {
	return []corruptFileCase{
		{"garbage bytes", func(t *testing.T, path string) {
			_ = os.WriteFile(path, []byte("this is not a bbolt database, not at all; padding padding padding padding padding"), 0o600)
		}, nil},
		{"garbage page-sized", func(t *testing.T, path string) {
			b := make([]byte, 64<<10)
			for i := range b {
				b[i] = byte(i * 7)
			}
			_ = os.WriteFile(path, b, 0o600)
		}, nil},
		{"truncated", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			fi, _ := os.Stat(path)
			_ = os.Truncate(path, fi.Size()/3)
		}, nil},
		{"truncated by one page", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			TruncateLastPage(t, path)
		}, nil},
		{"truncated to one page", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			_ = os.Truncate(path, 4096)
		}, nil},
		{"foreign bbolt file", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Update(func(tx *bolt.Tx) error {
				b, _ := tx.CreateBucket([]byte("somebody-else"))
				return b.Put([]byte("k"), []byte("v"))
			})
			_ = db.Close()
		}, nil},
		{"wrong magic", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			db, _ := bolt.Open(path, 0o600, nil)
			_ = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(headerBucket).Put([]byte("magic"), []byte("other")) })
			_ = db.Close()
		}, nil},
		{"newer format", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			db, _ := bolt.Open(path, 0o600, nil)
			_ = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(headerBucket).Put([]byte("format"), []byte("999")) })
			_ = db.Close()
		}, nil},
		{"bad resourceVersion", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
			db, _ := bolt.Open(path, 0o600, nil)
			_ = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(rvBucket).Put([]byte("effectivepolicies"), []byte("x1")) })
			_ = db.Close()
		}, nil},
		{"undecodable object", func(t *testing.T, path string) {
			writeValid(t, filepath.Dir(path))
		}, func(string, Entry) error { return errors.New("cannot decode") }},
	}
}

// checkCorruptFileDiscarded opens a cache over the spoilt file: nothing is
// loaded from it, it is moved aside, and the fresh file takes a write.
func checkCorruptFileDiscarded(t *testing.T, tt corruptFileCase) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	tt.prepare(t, path)
	db, loaded, discarded := mustOpen(t, dir, tt.decode)
	if discarded == nil {
		t.Fatalf("file was not discarded")
	}
	t.Logf("discarded: %v", discarded)
	for _, r := range resources {
		if len(loaded[r].Entries) != 0 || loaded[r].ResourceVersion != 0 {
			t.Errorf("%s served from a discarded file: %+v", r, loaded[r])
		}
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("corrupt file not moved aside: %v", err)
	}
	// The fresh file works.
	if err := db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/b", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 1)}}, false); err != nil {
		t.Fatal(err)
	}
}

func TestUnwritableDir(t *testing.T) {
	// A directory under procfs cannot be created, not even by root (CI runs
	// as root, where a chmod'ed directory would still be writable).
	if _, _, _, err := Open(filepath.Join("/proc/self", "effectivepolicy-cache-test", "sub"), format, resources, nil); err == nil {
		t.Fatal("expected an error")
	}
}

func TestNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(f, nil, 0o600)
	if _, _, _, err := Open(f, format, resources, nil); err == nil {
		t.Fatal("expected an error")
	}
}

// TruncateLastPage cuts the last page in use off a bbolt file.
func TruncateLastPage(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	_ = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	ps := int64(db.Info().PageSize)
	_ = db.Close()
	if err := os.Truncate(path, size-ps); err != nil {
		t.Fatal(err)
	}
}

// TestEpoch: a new file gets a random epoch, kept by every later Open; a
// rebuilt file gets another one; a format-1 file (no epoch) is rebuilt.
func TestEpoch(t *testing.T) {
	dir := t.TempDir()
	db, _, _ := mustOpen(t, dir, nil)
	epoch := db.Epoch()
	if !resourceversion.ValidEpoch(uint64(epoch)) {
		t.Fatalf("epoch %d", epoch)
	}
	if err := db.Write(Batch{"effectivepolicies": {ResourceVersion: rv(db, 5)}}, false); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	db2, loaded, discarded := mustOpen(t, dir, nil)
	if discarded != nil || db2.Epoch() != epoch || loaded["effectivepolicies"].ResourceVersion != resourceversion.Make(epoch, 5) {
		t.Fatalf("reopened: epoch %d (want %d), loaded %+v, discarded %v", db2.Epoch(), epoch, loaded, discarded)
	}
	_ = db2.Close()
	if other, _, _ := mustOpen(t, t.TempDir(), nil); other.Epoch() == epoch {
		t.Errorf("a new file got the same epoch %d", epoch)
	}

	// A stored resourceVersion of another epoch: corrupt.
	bdb, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = bdb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(rvBucket).Put([]byte("effectivepolicies"), []byte("5"))
	})
	_ = bdb.Close()
	db3, loaded, discarded := mustOpen(t, dir, nil)
	if discarded == nil || db3.Epoch() == epoch || loaded["effectivepolicies"].ResourceVersion != 0 {
		t.Fatalf("rv of another epoch: epoch %d, loaded %+v, discarded %v", db3.Epoch(), loaded, discarded)
	}
	_ = db3.Close()

	// A format-1 file: resourceVersions without epoch, rebuilt.
	old := t.TempDir()
	bdb, err = bolt.Open(filepath.Join(old, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = bdb.Update(func(tx *bolt.Tx) error {
		h, _ := tx.CreateBucket(headerBucket)
		_ = h.Put([]byte("magic"), []byte(Magic))
		_ = h.Put([]byte("format"), []byte("1"))
		rvs, _ := tx.CreateBucket(rvBucket)
		_ = rvs.Put([]byte("effectivepolicies"), []byte("500"))
		for _, r := range resources {
			b, _ := tx.CreateBucket([]byte(r))
			_ = b.Put([]byte("a/x"), []byte(`{}`))
		}
		return nil
	})
	_ = bdb.Close()
	db4, loaded, discarded := mustOpen(t, old, nil)
	if discarded == nil || db4.Epoch() == 0 || len(loaded["effectivepolicies"].Entries) != 0 || loaded["effectivepolicies"].ResourceVersion != 0 {
		t.Fatalf("format 1: epoch %d, loaded %+v, discarded %v", db4.Epoch(), loaded, discarded)
	}
	t.Logf("format 1 discarded: %v", discarded)
}

// Reset adopts a file for a history the caller already serves: the old
// content and epoch are gone, the new ones survive a reopen; a batch of
// another epoch is refused and leaves the file alone.
func TestReset(t *testing.T) {
	tests := []struct {
		name    string
		epoch   uint32
		batch   func(epoch uint32) Batch
		wantErr bool
	}{
		{"snapshot of both resources", 4242, func(e uint32) Batch {
			return Batch{
				"effectivepolicies":        {Entries: []Entry{{Key: "b/new", Data: []byte(`{"n":1}`)}}, ResourceVersion: resourceversion.Make(e, 9)},
				"clustereffectivepolicies": {Entries: nil, ResourceVersion: resourceversion.Make(e, 9)},
			}
		}, false},
		{"empty snapshot", 17, func(e uint32) Batch { return Batch{} }, false},
		{"resourceVersion of another epoch", 99, func(e uint32) Batch {
			return Batch{"effectivepolicies": {ResourceVersion: resourceversion.Make(e+1, 1)}}
		}, true},
		{"epoch 0", 0, func(e uint32) Batch { return Batch{} }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, _, _ := mustOpen(t, dir, nil)
			oldEpoch := db.Epoch()
			if err := db.Write(Batch{
				"effectivepolicies":        {Entries: []Entry{{Key: "a/old", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 5)},
				"clustereffectivepolicies": {Entries: []Entry{{Key: "/old", Data: []byte(`{}`)}}, ResourceVersion: rv(db, 5)},
			}, false); err != nil {
				t.Fatal(err)
			}
			err := db.Reset(tc.epoch, tc.batch(tc.epoch))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reset: err %v, want error %v", err, tc.wantErr)
			}
			_ = db.Close()
			db2, loaded, discarded := mustOpen(t, dir, nil)
			if discarded != nil {
				t.Fatalf("file after Reset discarded: %v", discarded)
			}
			if tc.wantErr {
				if db2.Epoch() != oldEpoch || len(loaded["effectivepolicies"].Entries) != 1 || loaded["effectivepolicies"].Entries[0].Key != "a/old" {
					t.Fatalf("a refused Reset changed the file: epoch %d (was %d), %+v", db2.Epoch(), oldEpoch, loaded)
				}
				return
			}
			if db2.Epoch() != tc.epoch {
				t.Fatalf("epoch %d after reopen, want %d", db2.Epoch(), tc.epoch)
			}
			want := tc.batch(tc.epoch)
			for _, r := range resources {
				got := loaded[r]
				if got.ResourceVersion != want[r].ResourceVersion || len(got.Entries) != len(want[r].Entries) {
					t.Fatalf("%s after reopen: %+v, want %+v", r, got, want[r])
				}
				for i := range got.Entries {
					if got.Entries[i].Key != want[r].Entries[i].Key || string(got.Entries[i].Data) != string(want[r].Entries[i].Data) {
						t.Fatalf("%s entry %d: %+v, want %+v", r, i, got.Entries[i], want[r].Entries[i])
					}
				}
			}
		})
	}
}
