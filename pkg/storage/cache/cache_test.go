package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

var resources = []string{"effectivepolicies", "clustereffectivepolicies"}

func mustOpen(t *testing.T, dir string, decode DecodeFunc) (*DB, map[string]Resource, error) {
	t.Helper()
	db, loaded, discarded, err := Open(dir, resources, decode)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, loaded, discarded
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db, loaded, discarded := mustOpen(t, dir, nil)
	if discarded != nil || len(loaded["effectivepolicies"].Entries) != 0 {
		t.Fatalf("fresh file: discarded=%v loaded=%v", discarded, loaded)
	}
	if err := db.Write(Batch{
		"effectivepolicies":        {Entries: []Entry{{Key: "a/x", Data: []byte(`{"x":1}`)}, {Key: "a/y", Data: []byte(`{}`)}}, ResourceVersion: 7},
		"clustereffectivepolicies": {Entries: []Entry{{Key: "/gc", Data: []byte(`{}`)}}, ResourceVersion: 3},
	}, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/y"}}, ResourceVersion: 8}}, false); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, loaded, discarded = mustOpen(t, dir, nil)
	if discarded != nil {
		t.Fatal(discarded)
	}
	ep := loaded["effectivepolicies"]
	if ep.ResourceVersion != 8 || len(ep.Entries) != 1 || ep.Entries[0].Key != "a/x" || string(ep.Entries[0].Data) != `{"x":1}` {
		t.Errorf("effectivepolicies = %+v", ep)
	}
	if c := loaded["clustereffectivepolicies"]; c.ResourceVersion != 3 || len(c.Entries) != 1 {
		t.Errorf("clustereffectivepolicies = %+v", c)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	db, _, _ := mustOpen(t, dir, nil)
	_ = db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/x", Data: []byte(`{}`)}}, ResourceVersion: 1}}, false)
	_ = db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/z", Data: []byte(`{}`)}}, ResourceVersion: 5}}, true)
	_ = db.Close()
	_, loaded, _ := mustOpen(t, dir, nil)
	if ep := loaded["effectivepolicies"]; len(ep.Entries) != 1 || ep.Entries[0].Key != "a/z" || ep.ResourceVersion != 5 {
		t.Errorf("after replace: %+v", ep)
	}
}

func writeValid(t *testing.T, dir string) {
	t.Helper()
	db, _, _, err := Open(dir, resources, nil)
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	for i := 0; i < 200; i++ {
		entries = append(entries, Entry{Key: "ns/" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Data: []byte(`{"metadata":{"name":"x"}}`)})
	}
	if err := db.Write(Batch{"effectivepolicies": {Entries: entries, ResourceVersion: 42}}, false); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
}

func TestCorruptFilesAreDiscarded(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		decode  DecodeFunc
	}{
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			if err := db.Write(Batch{"effectivepolicies": {Entries: []Entry{{Key: "a/b", Data: []byte(`{}`)}}, ResourceVersion: 1}}, false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUnwritableDir(t *testing.T) {
	// A directory under procfs cannot be created, not even by root (CI runs
	// as root, where a chmod'ed directory would still be writable).
	if _, _, _, err := Open(filepath.Join("/proc/self", "effectivepolicy-cache-test", "sub"), resources, nil); err == nil {
		t.Fatal("expected an error")
	}
}

func TestNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(f, nil, 0o600)
	if _, _, _, err := Open(f, resources, nil); err == nil {
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
