package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// assets is the page built by hack/build-ui.sh from web/ (committed, so
// that go build needs no Node.js; hack/verify.sh checks it is current).
//
//go:embed assets/index.html assets/app.js assets/app.css
var assets embed.FS

var assetTypes = map[string]string{
	"/":        "text/html; charset=utf-8",
	"/app.js":  "text/javascript; charset=utf-8",
	"/app.css": "text/css; charset=utf-8",
}

// serveAsset serves the page's files.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	ctype, ok := assetTypes[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	name := "assets" + r.URL.Path
	if r.URL.Path == "/" {
		name = "assets/index.html"
	}
	data, err := assets.ReadFile(name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(data)
}

// Report is the data of an --html file: what the command printed, as
// trees, and the graph of the objects it is about.
type Report struct {
	Title string      `json:"title"`
	Trees []*TreeNode `json:"trees"`
	Graph Graph       `json:"graph"`
	// Targets are the stacks of the graph's targets by node id, shown when
	// a node is clicked.
	Targets map[string][]*TreeNode `json:"targets,omitempty"`
}

// The tags vite writes into index.html for the script and the stylesheet,
// which an --html file has inline instead.
const (
	scriptTag = `<script type="module" crossorigin src="./app.js"></script>`
	styleTag  = `<link rel="stylesheet" crossorigin href="./app.css">`
)

// WriteHTML writes r as one self-contained page: the script, the
// stylesheet and the data inline, and a policy that lets it load nothing
// from anywhere.
func WriteHTML(w io.Writer, r Report) error {
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/app.js")
	if err != nil {
		return err
	}
	css, err := assets.ReadFile("assets/app.css")
	if err != nil {
		return err
	}
	// json.Marshal escapes <, > and &, so no text of the data can close
	// the script element.
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s := string(page)
	if !strings.Contains(s, scriptTag) || !strings.Contains(s, styleTag) {
		return fmt.Errorf("the embedded page has no %s or %s: rebuild it with hack/build-ui.sh", scriptTag, styleTag)
	}
	var script bytes.Buffer
	script.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">` + "\n")
	script.WriteString(`<script type="application/json" id="ep-data">`)
	script.Write(data)
	script.WriteString("</script>\n<script type=\"module\">")
	script.WriteString(strings.ReplaceAll(string(js), "</script", `<\/script`))
	script.WriteString("</script>")
	s = strings.Replace(s, scriptTag, script.String(), 1)
	s = strings.Replace(s, styleTag, "<style>"+strings.ReplaceAll(string(css), "</style", `<\/style`)+"</style>", 1)
	_, err = io.WriteString(w, s)
	return err
}
