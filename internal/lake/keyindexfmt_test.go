package lake

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
)

// Both blob versions refuse, with the same words, a blob whose keys are not sorted and unique
// (the lookups search it by halves) and one whose entries are not as many as its footer says.
func TestKeyIndexDecodeRefusesUnsortedOrMiscountedBlobs(t *testing.T) {
	sorted := []KeyEntry{{Key: "k1", SnapshotID: 1, RunID: "r1"}, {Key: "k2", SnapshotID: 2, RunID: "r2"}}
	unsorted := []KeyEntry{sorted[1], sorted[0]}
	twice := []KeyEntry{sorted[0], sorted[0]}
	versions := []struct {
		name   string
		encode func([]KeyEntry) []byte
		decode func([]byte, map[string]string) ([]KeyEntry, error)
	}{
		{"v1", encodeKeyIndexV1, decodeKeyIndexV1},
		{"v2", encodeKeyIndexV2, decodeKeyIndexV2},
	}
	cases := []struct {
		name    string
		entries []KeyEntry
		count   int
		want    string
	}{
		{"sorted", sorted, 2, ""},
		{"unsorted", unsorted, 2, `keys out of order at "k1"`},
		{"a key twice", twice, 2, `keys out of order at "k1"`},
		{"footer counts more", sorted, 3, "2 keys, the footer says 3"},
	}
	for _, v := range versions {
		for _, c := range cases {
			data := v.encode(c.entries)
			sum := sha256.Sum256(data)
			props := map[string]string{indexCountProp: strconv.Itoa(c.count), indexSHA256Prop: hex.EncodeToString(sum[:])}
			got, err := v.decode(data, props)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s %s: %v", v.name, c.name, err)
			case c.want == "" && (len(got) != 2 || got[0].Key != "k1" || got[1].Key != "k2"):
				t.Errorf("%s %s: decoded %+v, want k1 and k2", v.name, c.name, got)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Errorf("%s %s: error %v, want %q", v.name, c.name, err, c.want)
			case c.want != "" && got != nil:
				t.Errorf("%s %s: decoded %+v with the error, want nothing", v.name, c.name, got)
			}
		}
	}
}
