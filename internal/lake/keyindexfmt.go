package lake

// The bytes of a key index blob. v1 (ldp-key-index-v1, the last release's) is read only; every
// index ldp writes is v2 (ldp-key-index-v2): the same records, sorted by key, laid out
// compactly and compressed with zstd. docs/exactly-once.md describes both.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// A v2 record's key is one of two shapes: the 64 hexadecimal digits of an ldp key (the
// SHA-256 of its window, stored as its 32 bytes), or any other string a user chose. A window
// is empty, START/END as ldp writes it (two instants in microseconds), or any other string.
const (
	keyHex     = 0 // then 32 bytes; otherwise the tag is len+1, then the bytes
	windowNone = 0
	windowSpan = 1 // then start (µs since the epoch, varint) and end-start (µs, uvarint); otherwise len+2, then the bytes
)

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

// zstdCodec is the process's encoder and decoder: both are safe for concurrent EncodeAll and
// DecodeAll, and costly to build.
func zstdCodec() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	})
	return zstdEnc, zstdDec
}

// encodeKeyIndexV2 lays entries (sorted by key) out as a v2 blob: the distinct spec hashes
// once, then a record per key, the whole compressed with zstd.
func encodeKeyIndexV2(entries []KeyEntry) []byte {
	hashes := specHashesOf(entries)
	slot := make(map[string]uint64, len(hashes))
	for i, h := range hashes {
		slot[h] = uint64(i + 1)
	}
	buf := make([]byte, 0, 64+len(entries)*96)
	str := func(s string, shift uint64) {
		buf = binary.AppendUvarint(buf, uint64(len(s))+shift)
		buf = append(buf, s...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(hashes)))
	for _, h := range hashes {
		str(h, 0)
	}
	for _, e := range entries {
		if raw, ok := hexKey(e.Key); ok {
			buf = append(buf, keyHex)
			buf = append(buf, raw...)
		} else {
			str(e.Key, 1)
		}
		buf = binary.AppendVarint(buf, e.SnapshotID)
		buf = binary.AppendVarint(buf, e.TimestampMs)
		if start, span, ok := windowSpanOf(e.Window); ok {
			buf = binary.AppendUvarint(buf, windowSpan)
			buf = binary.AppendVarint(buf, start)
			buf = binary.AppendUvarint(buf, span)
		} else if e.Window == "" {
			buf = binary.AppendUvarint(buf, windowNone)
		} else {
			str(e.Window, 2)
		}
		str(e.RunID, 0)
		buf = binary.AppendUvarint(buf, slot[e.SpecHash])
	}
	enc, _ := zstdCodec()
	return enc.EncodeAll(buf, make([]byte, 0, len(buf)/2))
}

// hexKey is the 32 bytes of a key written as 64 lowercase hexadecimal digits (the shape of
// every key ldp computes), so that decoding gives back the same string.
func hexKey(key string) ([]byte, bool) {
	if len(key) != 64 || strings.ToLower(key) != key {
		return nil, false
	}
	raw, err := hex.DecodeString(key)
	return raw, err == nil
}

// windowSpanOf reads a window written as ldp writes one, exactly: anything else is kept as
// its string.
func windowSpanOf(w string) (start int64, span uint64, ok bool) {
	a, b, found := strings.Cut(w, "/")
	if !found {
		return 0, 0, false
	}
	s, err1 := time.Parse(time.RFC3339Nano, a)
	e, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil || e.Before(s) || (v1.LogicalWindow{Start: s, End: e}).String() != w {
		return 0, 0, false
	}
	return s.UnixMicro(), uint64(e.Sub(s).Microseconds()), true
}

func specHashesOf(entries []KeyEntry) []string {
	seen := map[string]bool{}
	for _, e := range entries {
		if e.SpecHash != "" {
			seen[e.SpecHash] = true
		}
	}
	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// checkBlob checks a blob against the sha256 and count its footer records.
func checkBlob(data []byte, props map[string]string) (int, error) {
	sum := sha256.Sum256(data)
	if want := props[indexSHA256Prop]; want != hex.EncodeToString(sum[:]) {
		return 0, fmt.Errorf("checksum mismatch: the blob's sha256 is %s, its footer says %q", hex.EncodeToString(sum[:]), want)
	}
	count, err := strconv.Atoi(props[indexCountProp])
	if err != nil || count < 0 {
		return 0, fmt.Errorf("bad %s %q", indexCountProp, props[indexCountProp])
	}
	return count, nil
}

var errTruncated = errors.New("truncated record")

// decodeKeyIndexV2 reads a v2 blob's records (the chain and gap are the caller's).
func decodeKeyIndexV2(data []byte, props map[string]string) ([]KeyEntry, error) {
	count, err := checkBlob(data, props)
	if err != nil {
		return nil, err
	}
	_, dec := zstdCodec()
	raw, err := dec.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	rd := bytes.NewReader(raw)
	uv := func() (uint64, error) {
		n, err := binary.ReadUvarint(rd)
		if err != nil {
			return 0, errTruncated
		}
		return n, nil
	}
	bytesOf := func(n uint64) (string, error) {
		if n > uint64(rd.Len()) {
			return "", errTruncated
		}
		b := make([]byte, n)
		io.ReadFull(rd, b)
		return string(b), nil
	}
	nh, err := uv()
	if err != nil || nh > uint64(rd.Len()) {
		return nil, errTruncated
	}
	hashes := make([]string, nh)
	for i := range hashes {
		n, err := uv()
		if err != nil {
			return nil, err
		}
		if hashes[i], err = bytesOf(n); err != nil {
			return nil, err
		}
	}
	entries := make([]KeyEntry, 0, min(count, rd.Len()))
	for rd.Len() > 0 {
		var e KeyEntry
		tag, err := uv()
		if err != nil {
			return nil, err
		}
		if tag == keyHex {
			k, err := bytesOf(32)
			if err != nil {
				return nil, err
			}
			e.Key = hex.EncodeToString([]byte(k))
		} else if e.Key, err = bytesOf(tag - 1); err != nil {
			return nil, err
		}
		if e.SnapshotID, err = binary.ReadVarint(rd); err != nil {
			return nil, errTruncated
		}
		if e.TimestampMs, err = binary.ReadVarint(rd); err != nil {
			return nil, errTruncated
		}
		switch tag, err := uv(); {
		case err != nil:
			return nil, err
		case tag == windowSpan:
			start, err := binary.ReadVarint(rd)
			if err != nil {
				return nil, errTruncated
			}
			span, err := uv()
			if err != nil {
				return nil, err
			}
			s := time.UnixMicro(start).UTC()
			e.Window = v1.LogicalWindow{Start: s, End: s.Add(time.Duration(span) * time.Microsecond)}.String()
		case tag >= 2:
			if e.Window, err = bytesOf(tag - 2); err != nil {
				return nil, err
			}
		}
		n, err := uv()
		if err != nil {
			return nil, err
		}
		if e.RunID, err = bytesOf(n); err != nil {
			return nil, err
		}
		h, err := uv()
		if err != nil || h > uint64(len(hashes)) {
			return nil, errTruncated
		}
		if h > 0 {
			e.SpecHash = hashes[h-1]
		}
		if entries, err = appendSorted(entries, e); err != nil {
			return nil, err
		}
	}
	if err := footerCount(entries, count); err != nil {
		return nil, err
	}
	return entries, nil
}

// decodeKeyIndexV1 reads a v1 blob: length-prefixed records, sorted by key.
func decodeKeyIndexV1(data []byte, props map[string]string) ([]KeyEntry, error) {
	count, err := checkBlob(data, props)
	if err != nil {
		return nil, err
	}
	entries := make([]KeyEntry, 0, min(count, len(data)))
	rd := bytes.NewReader(data)
	str := func() (string, error) {
		n, err := binary.ReadUvarint(rd)
		if err != nil || n > uint64(rd.Len()) {
			return "", errTruncated
		}
		b := make([]byte, n)
		io.ReadFull(rd, b)
		return string(b), nil
	}
	for rd.Len() > 0 {
		var e KeyEntry
		var err error
		if e.Key, err = str(); err != nil {
			return nil, err
		}
		if e.SnapshotID, err = binary.ReadVarint(rd); err != nil {
			return nil, errTruncated
		}
		if e.TimestampMs, err = binary.ReadVarint(rd); err != nil {
			return nil, errTruncated
		}
		if e.Window, err = str(); err != nil {
			return nil, err
		}
		if e.RunID, err = str(); err != nil {
			return nil, err
		}
		if e.SpecHash, err = str(); err != nil {
			return nil, err
		}
		if entries, err = appendSorted(entries, e); err != nil {
			return nil, err
		}
	}
	if err := footerCount(entries, count); err != nil {
		return nil, err
	}
	return entries, nil
}

// appendSorted appends a decoded entry, refusing one not after the last: every version of the
// blob keeps its keys sorted and unique, which the lookups' binary search relies on.
func appendSorted(entries []KeyEntry, e KeyEntry) ([]KeyEntry, error) {
	if n := len(entries); n > 0 && entries[n-1].Key >= e.Key {
		return nil, fmt.Errorf("keys out of order at %q", e.Key)
	}
	return append(entries, e), nil
}

// footerCount refuses a blob whose entries are not as many as its footer says: a blob cut or
// joined short of its end decodes to fewer.
func footerCount(entries []KeyEntry, count int) error {
	if len(entries) != count {
		return fmt.Errorf("%d keys, the footer says %d", len(entries), count)
	}
	return nil
}
