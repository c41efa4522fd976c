package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func extract(args []string) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	in := fs.String("i", "", "the docker-archive tarball")
	out := fs.String("o", "", "the directory to unpack the filesystem into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return errors.New("extract needs -i and -o")
	}
	img, err := tarball.ImageFromPath(*in, nil)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := unpack(*out, h, tr); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(cf)
}

// unpack writes one entry below dir (regular files and directories: all the
// image holds), refusing names that would leave dir.
func unpack(dir string, h *tar.Header, r io.Reader) error {
	p := filepath.Join(dir, filepath.FromSlash(h.Name))
	if p != filepath.Clean(dir) && !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
		return fmt.Errorf("entry %q leaves %s", h.Name, dir)
	}
	mode := os.FileMode(h.Mode & 0o777)
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(p, mode|0o700)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}
	return fmt.Errorf("entry %q: type %c not expected in this image", h.Name, h.Typeflag)
}
