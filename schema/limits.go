package schema

// Limits bound what [Decode] accepts. A zero or negative field means the
// corresponding default of [DefaultLimits].
type Limits struct {
	// MaxBytes bounds the length of the raw input. Longer input fails with
	// an error wrapping [ErrTooLarge].
	MaxBytes int
	// MaxDepth bounds the nesting of arrays and objects. A scalar document
	// has depth 0, [] and {} have depth 1.
	MaxDepth int
	// MaxStringBytes bounds the length, in bytes after unescaping, of every
	// string, member names included.
	MaxStringBytes int
	// MaxMembers bounds the total number of object members and array
	// elements in the whole document.
	MaxMembers int
}

// Default limits; see [DefaultLimits].
const (
	defaultMaxBytes       = 1 << 20
	defaultMaxDepth       = 32
	defaultMaxStringBytes = 64 << 10
	defaultMaxMembers     = 10_000
)

// DefaultLimits returns the limits used for request bodies: 1 MiB of input,
// nesting depth 32, strings of 64 KiB and 10,000 members and elements in
// total.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:       defaultMaxBytes,
		MaxDepth:       defaultMaxDepth,
		MaxStringBytes: defaultMaxStringBytes,
		MaxMembers:     defaultMaxMembers,
	}
}

// orDefault replaces zero or negative fields with the defaults.
func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = d.MaxStringBytes
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = d.MaxMembers
	}
	return l
}
