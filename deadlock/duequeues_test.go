package deadlock

import (
	"testing"
	"time"
)

// TestDueQueuesPerTimeout: waits with different deadlock timeouts (one
// queue each) come out in deadline order — a wait with a short timeout of
// its own, armed after long-timeout waits, is popped first — and emptied
// queues are dropped.
func TestDueQueuesPerTimeout(t *testing.T) {
	var q dueQueues
	ws := make([]*Wait, 5)
	for i := range ws {
		ws[i] = &Wait{}
	}
	long, short := 100*time.Second, 10*time.Millisecond
	ms := int64(time.Millisecond)
	// Start (ms) + timeout: w0 0+100s, w1 1+100s, w2 2+10ms, w3 3+100s, w4 50+10ms
	q.insert(long, due{at: 0 + int64(long), epoch: 1, w: ws[0]})
	q.insert(long, due{at: 1*ms + int64(long), epoch: 2, w: ws[1]})
	q.insert(short, due{at: 2*ms + int64(short), epoch: 3, w: ws[2]})
	q.insert(long, due{at: 3*ms + int64(long), epoch: 4, w: ws[3]})
	q.insert(short, due{at: 50*ms + int64(short), epoch: 5, w: ws[4]})
	if len(q.qs) != 2 || q.Len() != 5 {
		t.Fatalf("%d queues, %d waits; want 2, 5", len(q.qs), q.Len())
	}
	for _, want := range []int{2, 4, 0, 1, 3} {
		at, ok := q.first()
		if !ok {
			t.Fatal("empty too early")
		}
		w := q.pop()
		if w != ws[want] {
			t.Fatalf("popped the wait due at %d, want w%d", at, want)
		}
	}
	if _, ok := q.first(); ok || q.Len() != 0 || len(q.qs) != 1 {
		t.Fatalf("after popping everything: %d queues, %d waits", len(q.qs), q.Len())
	}
}

// TestDeadlineOf: a wait's deadline is its own timeout after it began,
// or the detector's when it has none.
func TestDeadlineOf(t *testing.T) {
	d := &Detector{timeout: time.Second}
	start := time.Unix(1000, 0)
	w := &Wait{Start: start}
	if got := d.deadlineOf(w); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("default: %v", got)
	}
	w.Timeout = 10 * time.Millisecond
	if got := d.deadlineOf(w); !got.Equal(start.Add(10 * time.Millisecond)) {
		t.Fatalf("own timeout: %v", got)
	}
}
