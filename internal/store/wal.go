package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The write-ahead log of a [Bolt] store. An Update is acknowledged once its
// record is in the log and the log is on disk (one fdatasync); the flusher
// copies records into the bbolt file later, many at a time, and the log's
// segments are reused once everything in them is in the file. OpenBolt
// replays records the file does not have yet.
//
// A segment is one file, named after the sequence number of its first
// record (%016x.seg), preallocated to segmentSize so that an fdatasync
// rarely has file metadata to write. It holds frames back to back:
//
//	length  uint32  payload length
//	crc     uint32  CRC-32C over seq and payload
//	seq     uint64  the record's sequence number
//	payload         ops (see encodeOps)
//
// A segment is read from its start while frames verify and their sequence
// numbers follow one another. Each record is written with a zeroed header
// after it, which the next one overwrites, so the log ends at zeros, or at
// a frame cut short by a crash (numbered as the next record).

// A segment's preallocated size is the store's tuning (segmentSize, 8 MiB
// by default); a record larger than a segment gets a segment of its own,
// grown to fit.

const frameHeader = 16

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Ops of a record's payload.
const (
	opPut    = 1
	opAppend = 2
	opDelete = 3
)

// walOp is one write of a record: a sealed value (nil for a delete) under
// bucket and key.
type walOp struct {
	op          byte
	bucket, key string
	value       []byte
}

// appendOp encodes o at the end of dst:
//
//	op byte, uvarint len(bucket), bucket, uvarint len(key), key,
//	and for a put or append: uvarint len(value), value
func appendOp(dst []byte, o walOp) []byte {
	dst = append(dst, o.op)
	dst = binary.AppendUvarint(dst, uint64(len(o.bucket)))
	dst = append(dst, o.bucket...)
	dst = binary.AppendUvarint(dst, uint64(len(o.key)))
	dst = append(dst, o.key...)
	if o.op != opDelete {
		dst = binary.AppendUvarint(dst, uint64(len(o.value)))
		dst = append(dst, o.value...)
	}
	return dst
}

var errBadRecord = errors.New("malformed log record")

// zeroHeader follows the last record of a segment: where replay stops.
var zeroHeader [frameHeader]byte

// decodeOps calls fn for each op of payload. The op's strings are copies;
// its value aliases payload.
func decodeOps(payload []byte, fn func(walOp) error) error {
	field := func() ([]byte, error) {
		n, w := binary.Uvarint(payload)
		if w <= 0 || n > uint64(len(payload)-w) {
			return nil, errBadRecord
		}
		f := payload[w : w+int(n)]
		payload = payload[w+int(n):]
		return f, nil
	}
	for len(payload) > 0 {
		o := walOp{op: payload[0]}
		payload = payload[1:]
		if o.op != opPut && o.op != opAppend && o.op != opDelete {
			return errBadRecord
		}
		b, err := field()
		if err != nil {
			return err
		}
		k, err := field()
		if err != nil {
			return err
		}
		if len(b) == 0 || len(k) == 0 {
			return errBadRecord
		}
		o.bucket, o.key = string(b), string(k)
		if o.op != opDelete {
			if o.value, err = field(); err != nil {
				return err
			}
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// sealFrame fills in the header of rec, a frame's room for its header
// followed by its payload, as the frame of record seq, and returns rec.
func sealFrame(rec []byte, seq uint64) []byte {
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(rec)-frameHeader))
	binary.LittleEndian.PutUint64(rec[8:], seq)
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(rec[8:], crcTable))
	return rec
}

// opSize is the length of o's encoding by appendOp.
func opSize(o walOp) int {
	n := 1 + uvarintLen(len(o.bucket)) + len(o.bucket) + uvarintLen(len(o.key)) + len(o.key)
	if o.op != opDelete {
		n += uvarintLen(len(o.value)) + len(o.value)
	}
	return n
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// readFrames calls fn for each record of a segment's contents, from its
// start, while frames verify and their sequence numbers run from first
// without a gap. It returns the offset after the last record read.
func readFrames(data []byte, first uint64, fn func(seq uint64, payload []byte) error) (int, error) {
	off := 0
	next := first
	for len(data)-off >= frameHeader {
		n := binary.LittleEndian.Uint32(data[off:])
		sum := binary.LittleEndian.Uint32(data[off+4:])
		seq := binary.LittleEndian.Uint64(data[off+8:])
		if n == 0 && sum == 0 && seq == 0 {
			break // never written
		}
		if seq != next || uint64(n) > uint64(len(data)-off-frameHeader) {
			break
		}
		end := off + frameHeader + int(n)
		if crc32.Checksum(data[off+8:end], crcTable) != sum {
			break
		}
		if err := fn(seq, data[off+frameHeader:end]); err != nil {
			return off, err
		}
		off = end
		next++
	}
	return off, nil
}

// frameAt reports whether data starts with a sound frame of record seq.
func frameAt(data []byte, seq uint64) bool {
	ok := false
	readFrames(data, seq, func(uint64, []byte) error {
		ok = true
		return errStop
	})
	return ok
}

var errStop = errors.New("stop")

// segment is one log file.
type segment struct {
	first uint64 // sequence number of its first record
	last  uint64 // of its last record; first-1 while it has none
	path  string
	end   int64 // where its records end (replayLog sets it)
}

// wal is the log of one store, used by one writer at a time (the store's
// Update, under its lock). The flusher sets applied.
type wal struct {
	applied atomic.Uint64 // every record up to it is in the file
	dir     string
	segs    []segment // oldest first; the last is the one written to
	f       *os.File  // the last segment
	off     int64     // where the next frame goes in f
	size    int64     // f's allocated size
	spare   *segment  // a segment whose records are all in the file, to reuse

	segmentSize int64 // a new segment's preallocated size
}

func segmentName(first uint64) string { return fmt.Sprintf("%016x.seg", first) }

// listSegments returns the segments in dir, oldest first.
func listSegments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok || e.IsDir() {
			continue
		}
		first, err := strconv.ParseUint(name, 16, 64)
		if err != nil || len(name) != 16 {
			continue
		}
		segs = append(segs, segment{first: first, last: first - 1, path: filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.first, b.first) })
	return segs, nil
}

// replayLog calls fn, in order, for every record in dir after applied. It
// fails, wrapping ErrCorrupt, when a record after applied is missing before
// one that is present, or a damaged record has records after it: an
// acknowledged write would be lost. It returns the sequence number of the
// last record (applied if there is none after it) and the segments, oldest
// first, each with its last record and where its records end.
func replayLog(dir string, applied uint64, fn func(seq uint64, payload []byte) error) (uint64, []segment, error) {
	segs, err := listSegments(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return applied, nil, nil
		}
		return 0, nil, err
	}
	next := applied + 1 // the record the file needs next
	damaged := false    // a record failed its check: the log ended there
	for i, s := range segs {
		data, err := os.ReadFile(s.path)
		if err != nil {
			return 0, nil, err
		}
		end := s.first - 1
		off, err := readFrames(data, s.first, func(seq uint64, payload []byte) error {
			end = seq
			if seq < next {
				return nil // already in the file
			}
			if seq > next || damaged {
				return fmt.Errorf("store: log record %d follows %d: records are missing or damaged: %w", seq, next-1, ErrCorrupt)
			}
			next++
			return fn(seq, payload)
		})
		if err != nil {
			return 0, nil, err
		}
		segs[i].last, segs[i].end = end, int64(off)
		// After the last record comes unwritten space, the stale frames
		// of the segment's earlier use (numbered before its first), or a
		// frame cut short by a crash, numbered as the next record: only
		// the last record written can be that.
		if rest := data[off:]; end >= applied && len(rest) >= frameHeader && binary.LittleEndian.Uint64(rest[8:]) > end {
			damaged = true
			// A damaged record with a sound one after it was no torn
			// last write: acknowledged records are lost.
			if n := binary.LittleEndian.Uint32(rest); uint64(n) <= uint64(len(rest)-frameHeader) &&
				frameAt(rest[frameHeader+int(n):], end+2) {
				return 0, nil, fmt.Errorf("store: log record %d is damaged and records follow it: %w", end+1, ErrCorrupt)
			}
		}
	}
	return next - 1, segs, nil
}

// openLog prepares dir for appending the record first, after a replay that
// found segs (see replayLog) and a file that has every record up to
// applied. The segments holding records the file does not have are kept
// until the flusher copies them (the newest has whatever follows its last
// record zeroed: a frame a crash cut short there would otherwise read as
// damaged once records follow it in the next segment); of the others, the
// newest is reused and the rest removed.
func openLog(dir string, first, applied uint64, segs []segment, segmentSize int64) (*wal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := narrowMode(dir); err != nil {
		return nil, err
	}
	// The directory's own entry, made durable before any record is.
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	w := &wal{dir: dir, segmentSize: segmentSize}
	w.applied.Store(applied)
	var done []segment
	for _, s := range segs {
		// An empty segment (the newest, started for a record never
		// written) holds nothing the file lacks, whatever its number.
		if s.last >= s.first && s.last > applied {
			w.segs = append(w.segs, s)
		} else {
			done = append(done, s)
		}
	}
	if n := len(done); n > 0 {
		w.spare = &done[n-1]
		done = done[:n-1]
	}
	for _, s := range done {
		if err := os.Remove(s.path); err != nil {
			return nil, err
		}
	}
	if n := len(w.segs); n > 0 {
		if err := endSegment(w.segs[n-1]); err != nil {
			return nil, err
		}
	}
	if err := w.startSegment(first); err != nil {
		return nil, err
	}
	return w, nil
}

// endSegment zeroes the frame header after s's last record, if there is
// room for one, and syncs it.
func endSegment(s segment) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size()-s.end < frameHeader {
		return nil
	}
	if _, err := f.WriteAt(zeroHeader[:], s.end); err != nil {
		return err
	}
	return datasync(f)
}

// startSegment makes the segment that begins with record first the one
// written to: the spare renamed, or a new preallocated file. The directory
// is synced before any record goes into it.
func (w *wal) startSegment(first uint64) error {
	path := filepath.Join(w.dir, segmentName(first))
	var f *os.File
	var err error
	if w.spare != nil {
		if err = os.Rename(w.spare.path, path); err != nil {
			return err
		}
		w.spare = nil
		f, err = os.OpenFile(path, os.O_RDWR, 0o600)
	} else {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = preallocate(f, w.segmentSize)
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		err = narrowMode(path)
	}
	if err == nil {
		err = syncDir(w.dir)
	}
	if err != nil {
		f.Close()
		return err
	}
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.off, w.size = f, 0, fi.Size()
	w.segs = append(w.segs, segment{first: first, last: first - 1, path: path})
	return nil
}

// append writes the record seq and syncs it to disk. A zeroed header
// follows it, overwritten by the next record: the log's end is never
// mistaken for a damaged record by the replay, whatever a reused segment
// held before.
//
// rec is the record's frame with its header not yet filled in: its first
// frameHeader bytes are the room for it, then comes the payload. Its capacity should leave room for
// the zero header after it, which append writes with it.
func (w *wal) append(seq uint64, rec []byte) error {
	fr := sealFrame(rec, seq)
	fr = append(fr, zeroHeader[:]...)
	if w.off > 0 && w.off+int64(len(fr)) > w.size {
		if err := w.release(); err != nil {
			return err
		}
		if err := w.startSegment(seq); err != nil {
			return err
		}
	}
	if _, err := w.f.WriteAt(fr, w.off); err != nil {
		return err
	}
	if err := datasync(w.f); err != nil {
		return err
	}
	w.off += int64(len(fr))
	if w.off > w.size {
		w.size = w.off
	}
	w.off -= frameHeader
	w.segs[len(w.segs)-1].last = seq
	return nil
}

// release removes the segments whose records are all in the file, apart
// from the one written to, keeping the newest as the spare.
func (w *wal) release() error {
	applied := w.applied.Load()
	var keep []segment
	for i, s := range w.segs {
		if i == len(w.segs)-1 || s.last > applied {
			keep = append(keep, s)
			continue
		}
		if w.spare != nil {
			if err := os.Remove(w.spare.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		sp := s
		w.spare = &sp
	}
	w.segs = keep
	return nil
}

// close closes the segment written to.
func (w *wal) close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// syncDir makes the directory's entries (a created or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
