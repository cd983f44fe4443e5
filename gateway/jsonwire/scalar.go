package jsonwire

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// intRange is the range of an integer kind.
type intRange struct {
	min  int64
	max  uint64
	name string
}

var intRanges = map[protoreflect.Kind]intRange{
	protoreflect.Int32Kind:    {math.MinInt32, math.MaxInt32, "int32"},
	protoreflect.Sint32Kind:   {math.MinInt32, math.MaxInt32, "int32"},
	protoreflect.Sfixed32Kind: {math.MinInt32, math.MaxInt32, "int32"},
	protoreflect.Uint32Kind:   {0, math.MaxUint32, "uint32"},
	protoreflect.Fixed32Kind:  {0, math.MaxUint32, "uint32"},
	protoreflect.Int64Kind:    {math.MinInt64, math.MaxInt64, "int64"},
	protoreflect.Sint64Kind:   {math.MinInt64, math.MaxInt64, "int64"},
	protoreflect.Sfixed64Kind: {math.MinInt64, math.MaxInt64, "int64"},
	protoreflect.Uint64Kind:   {0, math.MaxUint64, "uint64"},
	protoreflect.Fixed64Kind:  {0, math.MaxUint64, "uint64"},
}

// scalar checks and re-emits a scalar field value as the published
// document spells it, which protojson's parser would take more loosely:
// a 64-bit integer is a string holding a JSON number, a 32-bit integer
// or a float is a JSON number (a float may also be "NaN", "Infinity" or
// "-Infinity"), and an integer's value is integral.
func (w *walker) scalar(k protoreflect.Kind, tok json.Token) error {
	if err := w.checkScalar(k, tok); err != nil {
		return err
	}
	w.scalarOut(tok)
	return nil
}

func (w *walker) checkScalar(k protoreflect.Kind, tok json.Token) error {
	switch k {
	case protoreflect.StringKind:
		if _, ok := tok.(string); !ok {
			return w.errorf(false, "want a string")
		}
	case protoreflect.BytesKind:
		s, ok := tok.(string)
		if !ok || !validBase64(s) {
			return w.errorf(false, "want a base64 string")
		}
	case protoreflect.BoolKind:
		if _, ok := tok.(bool); !ok {
			return w.errorf(false, "want true or false")
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return w.checkFloat(k, tok)
	default:
		return w.checkInt(intRanges[k], tok)
	}
	return nil
}

// numberText returns the number a token holds: a JSON number, or a string
// holding exactly a JSON number.
func numberText(tok json.Token) (string, bool) {
	switch v := tok.(type) {
	case json.Number:
		return string(v), true
	case string:
		return v, isJSONNumber(v)
	}
	return "", false
}

func (w *walker) checkInt(r intRange, tok json.Token) error {
	s, ok := numberText(tok)
	if !ok {
		return w.errorf(false, "want an integer")
	}
	_, quoted := tok.(string)
	if wide := r.max > 1<<32; wide && !quoted {
		return w.errorf(false, "want a JSON string holding the integer (%s), for example \"42\"", r.name)
	} else if !wide && quoted {
		return w.errorf(false, "want an integer as a JSON number, not a string")
	}
	if quoted && !canonicalInt(s) {
		return w.errorf(false, "want the integer in plain decimal digits, for example \"42\"")
	}
	switch integerFits(s, r) {
	case notIntegral:
		return w.errorf(false, "want an integer, got a fraction")
	case outOfRange:
		return w.errorf(false, "out of range for %s (%d to %d)", r.name, r.min, r.max)
	}
	return nil
}

func (w *walker) checkFloat(k protoreflect.Kind, tok json.Token) error {
	if s, ok := tok.(string); ok && (s == "NaN" || s == "Infinity" || s == "-Infinity") {
		return nil
	}
	s, ok := tok.(json.Number)
	if !ok {
		return w.errorf(false, "want a number")
	}
	bits := 64
	if k == protoreflect.FloatKind {
		bits = 32
	}
	if _, err := strconv.ParseFloat(string(s), bits); err != nil {
		return w.errorf(false, "out of range for a %d-bit float", bits)
	}
	return nil
}

type fit int

const (
	fits fit = iota
	notIntegral
	outOfRange
)

// integerFits decides whether the JSON number s is an integer within r
// without ever materialising huge exponents (1e999999999 stays cheap).
func integerFits(s string, r intRange) fit {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return fits // zero, whatever the exponent
	}
	exp, err := strconv.Atoi(expText)
	if expText == "" {
		exp, err = 0, nil
	}
	if err != nil { // |exponent| beyond int: huge or tiny
		if strings.HasPrefix(expText, "-") {
			return notIntegral
		}
		return outOfRange
	}
	shift := exp - len(frac) // value = digits * 10^shift
	if shift < 0 {
		if -shift > len(digits) || strings.Trim(digits[len(digits)+shift:], "0") != "" {
			return notIntegral
		}
		digits = digits[:len(digits)+shift]
		if digits == "" {
			return fits
		}
	} else {
		if len(digits)+shift > 20 {
			return outOfRange
		}
		digits += strings.Repeat("0", shift)
	}
	u, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return outOfRange
	}
	if neg {
		if u > uint64(-(r.min+1))+1 { // |min| without overflow
			return outOfRange
		}
		return fits
	}
	if u > r.max {
		return outOfRange
	}
	return fits
}

// canonicalInt reports whether s is an integer as the published document
// spells a 64-bit one: decimal digits, no leading zero, no exponent or
// fraction, and a minus sign only before a non-zero value ("-0" is not
// canonical). protojson takes "1e2" and "5.0" too.
func canonicalInt(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
		if s == "0" {
			return false
		}
	}
	if s == "0" {
		return true
	}
	return len(s) > 0 && s[0] >= '1' && s[0] <= '9' && digitsEnd(s, 0) == len(s)
}

// isJSONNumber reports whether s is exactly a JSON number (RFC 8259
// section 6).
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digitsEnd(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digitsEnd(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsEnd(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// validBase64 accepts what protojson accepts: standard or URL alphabet,
// padded or not.
func validBase64(s string) bool {
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	_, err := enc.DecodeString(s)
	return err == nil
}

// validMapKey checks a JSON object key against the map's key kind.
func validMapKey(k protoreflect.Kind, key string) bool {
	switch k {
	case protoreflect.StringKind:
		return true
	case protoreflect.BoolKind:
		return key == "true" || key == "false"
	}
	r, ok := intRanges[k]
	if !ok {
		return false
	}
	if _, err := strconv.ParseInt(key, 10, 64); err != nil {
		if _, err := strconv.ParseUint(key, 10, 64); err != nil {
			return false
		}
	}
	return integerFits(key, r) == fits
}

// Describe says in words what values a field takes, for error details:
// "an integer from -2147483648 to 2147483647", "true or false", ...
func Describe(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BytesKind:
		return "a base64 string"
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	case protoreflect.EnumKind:
		return "one of " + strings.Join(EnumNames(fd.Enum()), ", ")
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "a " + string(fd.Message().Name())
	}
	r := intRanges[fd.Kind()]
	return "an integer from " + strconv.FormatInt(r.min, 10) + " to " + strconv.FormatUint(r.max, 10)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
