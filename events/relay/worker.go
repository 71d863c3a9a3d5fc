package relay

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events/sink"
)

// worker delivers one sink's events: it claims as many due deliveries as
// it has free send slots and runs each send in a goroutine of its own,
// so a slow receiver fills this sink's slots and nothing else.
type worker struct {
	r       *Relay
	key     sinkKey
	nudgeCh chan struct{}
	slots   chan struct{}
	sends   sync.WaitGroup

	mu  sync.Mutex
	sk  sink.Sink
	snd sender // nil until the first send, and after the sink changed

	cancel context.CancelFunc
	done   chan struct{}
}

func newWorker(r *Relay, sk sink.Sink) *worker {
	return &worker{r: r, key: sinkKey{sk.Workspace, sk.ID}, sk: sk,
		nudgeCh: make(chan struct{}, 1), slots: make(chan struct{}, r.Concurrency), done: make(chan struct{})}
}

func (w *worker) start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		w.run(ctx)
	}()
}

// stop cancels the worker and waits for it and its sends.
func (w *worker) stop() {
	w.cancel()
	<-w.done
}

// update hands the worker its sink as now stored; a change of what a send
// uses (kind, URL, subject, secret) replaces the sender at the next send.
func (w *worker) update(sk sink.Sink) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.sk
	w.sk = sk
	if w.snd != nil && (old.Kind != sk.Kind || old.URL != sk.URL || old.Subject != sk.Subject || old.Secret != sk.Secret) {
		w.snd.close()
		w.snd = nil
	}
}

// nudge asks the worker to claim now.
func (w *worker) nudge() {
	select {
	case w.nudgeCh <- struct{}{}:
	default:
	}
}

func (w *worker) run(ctx context.Context) {
	defer w.closeSender()
	defer w.sends.Wait()
	for {
		w.claim(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.nudgeCh:
		}
	}
}

// claim fills the free send slots with due deliveries.
func (w *worker) claim(ctx context.Context) {
	for ctx.Err() == nil {
		free := cap(w.slots) - len(w.slots) // only this goroutine takes slots
		if free == 0 {
			return
		}
		snd, err := w.sender(ctx)
		if err != nil {
			w.r.Logger.Warn("relay: cannot reach event sink", "workspace", w.key.workspace, "sink", w.key.id, "err", err)
			return
		}
		lease := uuid.New()
		cs, err := w.r.Store.ClaimDeliveries(ctx, w.key.workspace, w.key.id, w.r.Clock.Store(), lease,
			w.r.Timeout+leaseMargin, free)
		if err != nil {
			if ctx.Err() == nil {
				w.r.Logger.Warn("relay: claim deliveries failed", "workspace", w.key.workspace, "sink", w.key.id, "err", err)
			}
			return
		}
		for _, c := range cs {
			w.slots <- struct{}{}
			w.sends.Add(1)
			go w.deliver(ctx, snd, c, lease)
		}
		if len(cs) < free {
			return
		}
	}
}

// deliver sends one claimed delivery, with no transaction open, and
// settles it. A relay that is stopping leaves it pending.
func (w *worker) deliver(ctx context.Context, snd sender, c sink.Claimed, lease uuid.UUID) {
	defer w.sends.Done()
	defer func() {
		<-w.slots
		w.nudge() // a slot is free, and the subject's next event may be claimable
	}()
	sctx, cancel := context.WithTimeout(ctx, w.r.Timeout)
	sendErr := snd.send(sctx, c.Event)
	cancel()
	if ctx.Err() != nil {
		return
	}
	st, err := w.r.Store.SettleDelivery(ctx, c, lease, w.r.Clock.Store(), sendErr)
	if err != nil {
		w.r.Logger.Warn("relay: settle delivery failed", "sink", c.SinkID, "event", c.EventID, "err", err)
		return
	}
	if sendErr != nil {
		w.r.Logger.Info("relay: delivery failed", "workspace", c.Workspace, "sink", c.SinkID, "event", c.EventID,
			"attempt", c.Attempts, "status", st, "err", sendErr)
	}
	if w.r.OnSettle != nil {
		w.r.OnSettle(c, st, sendErr)
	}
}

// sender is the worker's sender for its sink as now stored, made on
// first use.
func (w *worker) sender(ctx context.Context) (sender, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snd != nil {
		return w.snd, nil
	}
	snd, err := newSender(w.sk, w.r.Timeout, func() { w.back(ctx) })
	if err != nil {
		return nil, err
	}
	w.snd = snd
	return snd, nil
}

// back is called when the sink is reachable again (its NATS connection
// returned): what backed off while it was away is due now.
func (w *worker) back(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if err := w.r.Store.RetryDeliveriesNow(ctx, w.key.workspace, w.key.id, w.r.Clock.Store()); err != nil && ctx.Err() == nil {
		w.r.Logger.Warn("relay: retry deliveries now failed", "sink", w.key.id, "err", err)
	}
	w.nudge()
}

func (w *worker) closeSender() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snd != nil {
		w.snd.close()
		w.snd = nil
	}
}
