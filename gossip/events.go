package gossip

import (
	"strconv"
	"sync"
)

// EventKind is what happened to a member.
type EventKind uint8

// The kinds of membership events.
const (
	// Joined: a node gossip did not know is up.
	Joined EventKind = iota + 1
	// Up: a node that was down answers again. Its Member carries its
	// current metadata, which may have changed while it was down.
	Up
	// Down: memberlist declared a node dead (it did not refute a
	// suspicion in time).
	Down
	// Left: a node left the cluster (Leave); it is no longer a member.
	Left
	// MetaChanged: an up node's metadata changed.
	MetaChanged
)

var eventNames = [...]string{Joined: "joined", Up: "up", Down: "down", Left: "left", MetaChanged: "meta_changed"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "event_" + strconv.Itoa(int(k))
}

// Event is a change to another node's membership, with the member as it
// is after it.
type Event struct {
	Kind   EventKind
	Member Member
}

// maxQueuedEvents bounds the events waiting for OnEvent; past it new
// events are dropped and counted, which only a stuck OnEvent causes.
const maxQueuedEvents = 4096

// DropEventQueueFull is the Metrics.Dropped reason of an event dropped
// because OnEvent fell maxQueuedEvents behind.
const DropEventQueueFull = "event_queue_full"

// eventQueue hands events from memberlist's goroutines, which must not
// block, to the one goroutine that calls OnEvent.
type eventQueue struct {
	metrics *Metrics
	mu      sync.Mutex
	queue   []Event
	wake    chan struct{}
}

func newEventQueue(m *Metrics) *eventQueue {
	return &eventQueue{metrics: m, wake: make(chan struct{}, 1)}
}

// push queues e. It never blocks.
func (q *eventQueue) push(e Event) {
	q.mu.Lock()
	full := len(q.queue) >= maxQueuedEvents
	if !full {
		q.queue = append(q.queue, e)
	}
	q.mu.Unlock()
	if full {
		q.metrics.Dropped.WithLabelValues(DropEventQueueFull).Inc()
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run delivers events to f in order until stop closes.
func (q *eventQueue) run(f func(Event), stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-q.wake:
		}
		q.mu.Lock()
		batch := q.queue
		q.queue = nil
		q.mu.Unlock()
		for _, e := range batch {
			select {
			case <-stop:
				return
			default:
			}
			q.metrics.Events.WithLabelValues(e.Kind.String()).Inc()
			if f != nil {
				f(e)
			}
		}
	}
}
