package check

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
)

// Summary counts the results.
type Summary struct {
	Expectations int `json:"expectations"`
	Checks       int `json:"checks"`
	Hold         int `json:"hold"`
	Fail         int `json:"fail"`
}

// Summary counts r's results.
func (r Report) Summary() Summary {
	var s Summary
	last := ""
	for _, res := range r.Results {
		if key := fmt.Sprintf("%s:%d", res.File, res.Line); key != last {
			s.Expectations++
			last = key
		}
		s.Checks++
		if res.Holds {
			s.Hold++
		} else {
			s.Fail++
		}
	}
	return s
}

// WriteText prints one line per expectation and target, PASS or FAIL,
// each failure on a line of its own below, and a summary.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, res := range r.Results {
		status := "PASS"
		if !res.Holds {
			status = "FAIL"
		}
		target := "(no target)"
		if res.Target != nil {
			target = res.Target.String()
		}
		// Names and messages come from the cluster: no terminal control
		// sequence gets through (kubectl's rule).
		fmt.Fprintf(&b, "%s  %s  %s\n", status, printers.EscapeTerminal(res.Expectation), printers.EscapeTerminal(target))
		for _, f := range res.Failures {
			fmt.Fprintf(&b, "      %s\n", printers.EscapeTerminal(f))
		}
	}
	s := r.Summary()
	fmt.Fprintf(&b, "\n%d %s, %d %s: %d %s, %d %s.\n", s.Expectations, plural(s.Expectations, "expectation"),
		s.Checks, plural(s.Checks, "check"), s.Hold, plural(s.Hold, "holds"), s.Fail, plural(s.Fail, "fails"))
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, word string) string {
	switch {
	case word == "holds" && n != 1:
		return "hold"
	case word == "fails" && n != 1:
		return "fail"
	case word != "holds" && word != "fails" && n != 1:
		return word + "s"
	}
	return word
}

// jsonReport is -o json: the results and their summary.
type jsonReport struct {
	Results []Result `json:"results"`
	Summary Summary  `json:"summary"`
}

// WriteJSON prints the results and their summary as JSON.
func (r Report) WriteJSON(w io.Writer) error {
	results := r.Results
	if results == nil {
		results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonReport{Results: results, Summary: r.Summary()})
}

// JUnit XML, as CI systems read it: a suite per expectation, a test case
// per target.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	File     string      `xml:"file,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitFailure `xml:"failure"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit prints the results as JUnit XML.
func (r Report) WriteJUnit(w io.Writer) error {
	s := r.Summary()
	out := junitSuites{Name: "kubectl effectivepolicy check", Tests: s.Checks, Failures: s.Fail}
	for _, res := range r.Results {
		n := len(out.Suites)
		if n == 0 || out.Suites[n-1].Name != res.Expectation || out.Suites[n-1].File != res.File {
			out.Suites = append(out.Suites, junitSuite{Name: res.Expectation, File: res.File})
			n++
		}
		suite := &out.Suites[n-1]
		c := junitCase{Name: "(no target)", Classname: res.Expectation, File: res.File, Line: res.Line}
		if res.Target != nil {
			c.Name = res.Target.String()
		}
		suite.Tests++
		if !res.Holds {
			suite.Failures++
			c.Failure = &junitFailure{Message: res.Failures[0], Type: "ExpectationFailed", Text: strings.Join(res.Failures, "\n")}
		}
		suite.Cases = append(suite.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
