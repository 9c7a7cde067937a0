package window

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

var placeholder = regexp.MustCompile(`\{(window_start|window_end)(?::([^{}]*))?\}`)

// HasPlaceholders reports whether a path names its file by the window.
func HasPlaceholders(path string) bool { return placeholder.MatchString(path) }

// FillPath replaces {window_start:FORMAT} and {window_end:FORMAT} in path with the window's
// bounds in loc, formatted with Python's strftime directives. {window_start} alone is the
// bound in ISO-8601. Without a window it is an error that names the placeholder.
func FillPath(path string, w v1.LogicalWindow, loc *time.Location) (string, error) {
	var err error
	out := placeholder.ReplaceAllStringFunc(path, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		if w.IsZero() {
			if err == nil {
				err = fmt.Errorf("source path %q uses the placeholder %s, which needs a window: run with --window START/END", path, m)
			}
			return m
		}
		t := w.Start
		if sub[1] == "window_end" {
			t = w.End
		}
		t = t.In(loc)
		if sub[2] == "" {
			return t.Format("2006-01-02T15:04:05Z07:00")
		}
		s, ferr := Strftime(sub[2], t)
		if ferr != nil && err == nil {
			err = ferr
		}
		return s
	})
	return out, err
}

// Strftime formats t with Python's strftime directives (the C locale).
func Strftime(format string, t time.Time) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", fmt.Errorf("strftime format %q ends with a lone %%", format)
		}
		switch format[i] {
		case 'Y':
			b.WriteString(fmt.Sprintf("%04d", t.Year()))
		case 'y':
			b.WriteString(fmt.Sprintf("%02d", t.Year()%100))
		case 'm':
			b.WriteString(fmt.Sprintf("%02d", int(t.Month())))
		case 'd':
			b.WriteString(fmt.Sprintf("%02d", t.Day()))
		case 'e':
			b.WriteString(fmt.Sprintf("%2d", t.Day()))
		case 'H':
			b.WriteString(fmt.Sprintf("%02d", t.Hour()))
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(fmt.Sprintf("%02d", h))
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'M':
			b.WriteString(fmt.Sprintf("%02d", t.Minute()))
		case 'S':
			b.WriteString(fmt.Sprintf("%02d", t.Second()))
		case 'f':
			b.WriteString(fmt.Sprintf("%06d", t.Nanosecond()/1000))
		case 'j':
			b.WriteString(fmt.Sprintf("%03d", t.YearDay()))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'U':
			b.WriteString(fmt.Sprintf("%02d", (t.YearDay()+6-int(t.Weekday()))/7))
		case 'W':
			b.WriteString(fmt.Sprintf("%02d", (t.YearDay()+6-(int(t.Weekday())+6)%7)/7))
		case 'G':
			y, _ := t.ISOWeek()
			b.WriteString(fmt.Sprintf("%04d", y))
		case 'V':
			_, wk := t.ISOWeek()
			b.WriteString(fmt.Sprintf("%02d", wk))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("strftime format %q: unknown directive %%%c", format, format[i])
		}
	}
	return b.String(), nil
}
