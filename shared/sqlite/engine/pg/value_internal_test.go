package pg

import (
	"database/sql/driver"
	"math"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPlainValuesAreAsPgxScansThem: plainValue decodes what it takes as
// pgx's scan plans do (valueOf without it), and leaves the rest to them.
func TestPlainValuesAreAsPgxScansThem(t *testing.T) {
	m := pgtype.NewMap()
	bin, text := int16(pgtype.BinaryFormatCode), int16(pgtype.TextFormatCode)
	for _, tc := range []struct {
		oid    uint32
		format int16
		v      any
	}{
		{pgtype.Int8OID, bin, int64(math.MinInt64)}, {pgtype.Int8OID, bin, int64(42)},
		{pgtype.Int4OID, bin, int32(-7)}, {pgtype.Int4OID, bin, int32(math.MaxInt32)},
		{pgtype.Int2OID, bin, int16(-300)}, {pgtype.BoolOID, bin, true}, {pgtype.BoolOID, bin, false},
		{pgtype.TextOID, text, "ticket 7 ünïcode"}, {pgtype.TextOID, bin, ""},
		{pgtype.VarcharOID, text, "v"}, {pgtype.NameOID, bin, "kassa"}, {pgtype.BPCharOID, text, "pad  "},
		{pgtype.Int8OID, text, int64(-9)}, {pgtype.BoolOID, text, true}, {pgtype.NumericOID, text, "1.50"},
	} {
		src, err := m.Encode(tc.oid, tc.format, tc.v, make([]byte, 0, 8))
		if err != nil {
			t.Fatalf("%d %v: %v", tc.oid, tc.v, err)
		}
		fd := pgconn.FieldDescription{DataTypeOID: tc.oid, Format: tc.format}
		want, err := scannedValue(m, fd, src)
		if err != nil {
			t.Fatalf("%d %v: %v", tc.oid, tc.v, err)
		}
		got, err := valueOf(m, fd, src)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%d %q: valueOf %#v (%v), pgx scans %#v", tc.oid, src, got, err, want)
		}
		if _, ok := plainValue(fd, src); ok && tc.format == text && tc.oid != pgtype.TextOID &&
			tc.oid != pgtype.VarcharOID && tc.oid != pgtype.NameOID && tc.oid != pgtype.BPCharOID {
			t.Errorf("%d in text: plainValue took it", tc.oid)
		}
	}
	for _, short := range [][]byte{{1}, {0, 0, 0}} {
		fd := pgconn.FieldDescription{DataTypeOID: pgtype.Int8OID, Format: bin}
		if _, err := valueOf(m, fd, short); err == nil {
			t.Errorf("an int8 of %d bytes read without an error", len(short))
		}
	}
}

// scannedValue is valueOf's answer by pgx's scan plans alone.
func scannedValue(m *pgtype.Map, fd pgconn.FieldDescription, src []byte) (driver.Value, error) {
	switch fd.DataTypeOID {
	case pgtype.BoolOID:
		var d bool
		err := m.Scan(fd.DataTypeOID, fd.Format, src, &d)
		return d, err
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		var d int64
		err := m.Scan(fd.DataTypeOID, fd.Format, src, &d)
		return d, err
	}
	var d string
	err := m.Scan(fd.DataTypeOID, fd.Format, src, &d)
	return d, err
}

// BenchmarkValueOf reads an order's row as the writer's reads do: two
// integers, three texts, a boolean.
func BenchmarkValueOf(b *testing.B) {
	m := pgtype.NewMap()
	var fds []pgconn.FieldDescription
	var srcs [][]byte
	for _, c := range []struct {
		oid uint32
		v   any
	}{{pgtype.Int8OID, int64(1234)}, {pgtype.Int8OID, int64(99)}, {pgtype.TextOID, "ord-0001"},
		{pgtype.TextOID, "open"}, {pgtype.TextOID, "store-1"}, {pgtype.BoolOID, true}} {
		f := m.FormatCodeForOID(c.oid)
		src, _ := m.Encode(c.oid, f, c.v, nil)
		fds, srcs = append(fds, pgconn.FieldDescription{DataTypeOID: c.oid, Format: f}), append(srcs, src)
	}
	for _, how := range []struct {
		name string
		read func(*pgtype.Map, pgconn.FieldDescription, []byte) (driver.Value, error)
	}{{"valueOf", valueOf}, {"pgx-scan", scannedValue}} {
		b.Run(how.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i, fd := range fds {
					if _, err := how.read(m, fd, srcs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
