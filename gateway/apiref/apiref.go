// Package apiref is the edge's API reference page, /docs: Swagger UI
// (npm package swagger-ui-dist, vendored at SwaggerUIVersion) rendering
// the served /openapi.json, with its "try it out" sending real requests to
// the edge the page came from, under a bearer token the reader types.
//
// Document keeps /openapi.json in the same two forms, compressed once
// when the edge builds the document, and File.Serve serves both.
//
// Everything is in the binary (go:embed): the page, its start-up script
// (init.js: no inline script, so the Content-Security-Policy allows only
// the page's own files), a small stylesheet and the vendored bundle, kept
// gzip-compressed (assets/vendor/*.gz) and sent as is to clients that
// accept gzip. Swagger UI's licences are beside it in assets/vendor and
// served under /docs/ too. The page makes no request to any other host.
//
// Updating Swagger UI: set the new version in tools/browser/package.json
// and SwaggerUIVersion, run `npm install --package-lock-only` in
// tools/browser, then `go test ./gateway/apiref -run TestVendored
// -update` (it needs npm) rewrites assets/vendor from the pinned package;
// without -update the test proves the embedded files are that package's.
package apiref

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// SwaggerUIVersion is the swagger-ui-dist release in assets/vendor; it
// must equal tools/browser/package.json's pin (TestVendored checks).
const SwaggerUIVersion = "5.35.0"

// Vendored names the files of swagger-ui-dist kept in assets/vendor: the
// bundle and stylesheet gzip-compressed (".gz" in the tree), the rest as
// published.
var Vendored = []string{
	"swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png",
	"LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt",
}

// CSP is the Content-Security-Policy of every /docs answer: scripts,
// styles, fonts and requests only from the edge itself, images also as
// data: URIs (Swagger UI's stylesheet draws its icons with them), no
// inline script, no frames, no forms, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Cache-Control values: the page is revalidated at every load (its ETag
// makes that a 304); the files it links carry their content's hash in the
// link (?v=), so a client keeps them for a day.
const (
	PageCache  = "no-cache"
	AssetCache = "public, max-age=86400"
)

//go:embed assets
var assets embed.FS

// File is one answer of /docs, or the document it reads (Document): its
// bytes gzip-compressed, with what the headers need.
type File struct {
	Name         string
	ContentType  string
	CacheControl string
	// ETag is weak (W/"<hash of the uncompressed bytes>"): one tag for the
	// gzip and the identity answers, which RFC 9110 section 8.8.1 allows
	// a weak validator (the two differ in bytes, not in meaning), and
	// If-None-Match compares weakly anyway (section 13.1.2).
	ETag string
	Size int // uncompressed
	Gzip []byte
	// raw is the uncompressed bytes when they are kept (Document); nil
	// for the embedded files, decompressed for a client without gzip.
	raw []byte
}

// Document returns the served form of the OpenAPI document b
// (/openapi.json, which the page reads): compressed once, here, so a
// client that accepts gzip (a browser, and so every load of /docs) gets
// the compressed bytes without a compression per request, and kept as is
// for one that does not. The caller builds it when the document changes
// (at start and at each reload), not per request.
func Document(b []byte) (*File, error) {
	f, err := newFile("openapi.json", b, false, PageCache)
	if err != nil {
		return nil, err
	}
	f.raw = b
	return f, nil
}

type files struct {
	page   *File
	byName map[string]*File
}

var (
	loadOnce sync.Once
	loaded   files
	loadErr  error
)

// Page returns /docs itself; Lookup returns /docs/<name>. Both build the
// files once, at first use (gzip of the small files, hashes, the page's
// links).
func Page() (*File, error) {
	loadOnce.Do(load)
	return loaded.page, loadErr
}

// Lookup returns the file served at /docs/<name>.
func Lookup(name string) (*File, bool) {
	loadOnce.Do(load)
	f, ok := loaded.byName[name]
	return f, ok
}

func load() { loaded, loadErr = build() }

func build() (files, error) {
	out := files{byName: map[string]*File{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(p) == "index.html" {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		name, gz := strings.CutSuffix(path.Base(p), ".gz")
		f, err := newFile(name, b, gz, AssetCache)
		if err != nil {
			return err
		}
		out.byName[name] = f
		return nil
	})
	if err != nil {
		return files{}, err
	}
	out.page, err = buildPage(out.byName)
	return out, err
}

// buildPage renders index.html, each link carrying its file's hash.
func buildPage(byName map[string]*File) (*File, error) {
	src, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return nil, err
	}
	var missing []string
	t, err := template.New("index").Funcs(template.FuncMap{
		"asset": func(name string) string {
			f, ok := byName[name]
			if !ok {
				missing = append(missing, name)
				return ""
			}
			return "docs/" + name + "?v=" + strings.Trim(strings.TrimPrefix(f.ETag, "W/"), `"`)
		},
	}).Parse(string(src))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct{ Version string }{SwaggerUIVersion}); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fs.ErrNotExist
	}
	return newFile("index.html", b.Bytes(), false, PageCache)
}

// newFile hashes b (its uncompressed bytes) and keeps it gzip-compressed:
// b as is when compressed, else compressed now.
func newFile(name string, b []byte, compressed bool, cache string) (*File, error) {
	raw, gz := b, b
	if compressed {
		var err error
		if raw, err = gunzip(b); err != nil {
			return nil, err
		}
	} else {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
		gz = buf.Bytes()
	}
	sum := sha256.Sum256(raw)
	return &File{
		Name: name, ContentType: contentType(name), CacheControl: cache,
		ETag: `W/"` + hex.EncodeToString(sum[:8]) + `"`, Size: len(raw), Gzip: gz,
	}, nil
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil {
		return nil, err
	}
	return out.Bytes(), r.Close()
}

// contentType is the media type of a file of /docs by its name; licences
// and notices are plain text.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}
