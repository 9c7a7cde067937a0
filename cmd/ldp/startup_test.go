package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestStartupSkipsSubstraitYAML guards the patched iceberg-go in third_party/iceberg-go:
// iceberg-go v0.7.0 parses substrait's embedded extension YAML (33 MB, 534k allocations,
// most of ldp's start-up time) in the init of table/substrait, which ldp links through
// catalog/sql. The patch builds it on first use. An iceberg-go upgrade that drops the
// replace directive, or a substrait-go that goes back to parsing at init, fails here.
//
// It reads the runtime's own account of each package's init (GODEBUG=inittrace=1) from this
// test binary, which links everything ldp links; -test.run=^$ runs no test after the inits.
func TestStartupSkipsSubstraitYAML(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("re-running the test binary with GODEBUG=inittrace=1: %v\n%s", err, stderr.Bytes())
	}
	const limit = 1 << 20
	var total, lines, avro int
	var who []string
	for line := range strings.Lines(stderr.String()) {
		// init github.com/x/y @12 ms, 0.5 ms clock, 162896 bytes, 135 allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		lines++
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if f[1] == "github.com/apache/iceberg-go/internal" {
			avro = n
		}
		if !strings.Contains(f[1], "substrait") {
			continue
		}
		total += n
		who = append(who, f[1]+" "+f[7]+" bytes")
	}
	if lines == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no init lines; its format may have changed:\n%s", stderr.Bytes())
	}
	if total > limit {
		t.Errorf("the substrait packages allocate %d bytes at init (limit %d): %s\n"+
			"iceberg-go's table/substrait parses substrait's YAML at init again; keep the lazy patch "+
			"(third_party/iceberg-go/README.md, docs/upstream/iceberg-go-lazy-substrait.md) or its upstream equivalent",
			total, limit, strings.Join(who, "; "))
	}
	// The second patch: iceberg-go/internal compiled its Avro manifest schemas at init (1.2 MB,
	// 11k allocations, 1.8 ms); they are compiled on first use.
	const avroLimit = 256 << 10
	if avro > avroLimit {
		t.Errorf("github.com/apache/iceberg-go/internal allocates %d bytes at init (limit %d): its Avro schemas are "+
			"compiled at init again; keep the lazy patch (docs/upstream/iceberg-go-lazy-avro-schemas.md)", avro, avroLimit)
	}
}
