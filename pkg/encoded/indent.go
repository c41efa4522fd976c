package encoded

// indenter re-indents compact JSON as json.Indent(dst, src, "", "  ") does,
// a piece at a time: json.Indent needs the whole document, and the pretty
// JSON of every EffectivePolicy of a large cluster (what curl gets by
// default) is over a gigabyte. The input must be compact, valid JSON (what
// appendJSON writes); strings are copied as they are.
type indenter struct {
	depth    int
	inString bool
	escaped  bool
	// opened is the bracket just opened and not yet followed by anything:
	// json.Indent leaves an empty {} or [] as it is, so the line break after
	// the bracket waits for the next byte.
	opened bool
}

func (in *indenter) newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for i := 0; i < depth; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

// write appends src, re-indented, to dst.
func (in *indenter) write(dst, src []byte) []byte {
	for _, c := range src {
		if in.inString {
			dst = append(dst, c)
			switch {
			case in.escaped:
				in.escaped = false
			case c == '\\':
				in.escaped = true
			case c == '"':
				in.inString = false
			}
			continue
		}
		if in.opened {
			in.opened = false
			if c == '}' || c == ']' {
				in.depth--
				dst = append(dst, c)
				continue
			}
			dst = in.newline(dst, in.depth)
		}
		switch c {
		case '"':
			in.inString = true
			dst = append(dst, c)
		case '{', '[':
			dst = append(dst, c)
			in.depth++
			in.opened = true
		case '}', ']':
			in.depth--
			dst = in.newline(dst, in.depth)
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = in.newline(dst, in.depth)
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
