package stripe

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestCounterSumsStripes(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				c.Add(uint64(g*1000+i), 2)
			}
		}(g)
	}
	wg.Wait()
	require.Equal(t, uint64(16000), c.Load())
}

func TestStripesHaveTheirOwnLines(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(slot{}))
	var c Counter
	require.Equal(t, uintptr(64), unsafe.Offsetof(c.stripes))
}
