package types

import (
	"math"
	"sort"
	"testing"
)

// TestOrderKey: OrderKey sorts as the float4 sort orders do, negative and
// fractional ones (ADD VALUE BEFORE the first gives 0, -1, ...) included.
func TestOrderKey(t *testing.T) {
	fs := []float32{-3, -1, -0.5, 0, 0.25, 1, 1.5, 2, 1e10}
	ks := make([]int64, len(fs))
	for i, f := range fs {
		ks[i] = OrderKey(f)
	}
	if !sort.SliceIsSorted(ks, func(i, j int) bool { return ks[i] < ks[j] }) {
		t.Fatalf("keys out of order: %v", ks)
	}
	for _, k := range ks {
		if k < 0 || k > math.MaxUint32 {
			t.Fatalf("key %d does not fit the row's 4 bytes", k)
		}
	}
}

// TestEnumTypeNumbers: enum types have even numbers, each one's array
// type the next; past the last number NewEnumType is 54000, never a
// number that wraps into the built-in types.
func TestEnumTypeNumbers(t *testing.T) {
	e, err := NewEnumType()
	if err != nil || !IsEnum(e) || IsArray(e) || !IsArray(e+1) || IsEnum(e+1) || ElemType(e+1) != e {
		t.Fatalf("%d %v", e, err)
	}
	if at, ok := ArrayOf(e); !ok || at != e+1 {
		t.Fatalf("ArrayOf(%d) = %d %v", e, at, ok)
	}
	enums.Lock()
	saved := enums.next
	enums.next = math.MaxUint16 - 3
	enums.Unlock()
	defer func() { enums.Lock(); enums.next = saved; enums.Unlock() }()
	if last, err := NewEnumType(); err != nil || last != math.MaxUint16-3 {
		t.Fatalf("the last number: %d %v", last, err)
	}
	if _, err := NewEnumType(); err == nil || err.(interface{ Error() string }).Error() != "too many enum types created since the server started" {
		t.Fatalf("past the last: %v", err)
	}
}
