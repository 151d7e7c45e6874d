// follow-events: follows a project's events with an integration's credential (docs/integrators.md),
// with nats.go 1.22 (Debian: golang-github-nats-io-go-nats-dev). It prints each event as a JSON
// line and acknowledges it once printed.
//
//	NATS_URL=nats://127.0.0.1:4222 ./follow-events -creds kasse-3.creds \
//	  -consumer integration-k3b5xq2d7mfa4h6ycn2e -filter 'events.acme-1a2b.pos.>'
//
// The three things a Go reader must know:
//   - A bound pull subscription names the integration's filter subject (`nats.filterSubject` of the
//     integration): with "" nats.go refuses it ("subject does not match consumer").
//   - The server answers a refused subject asynchronously, through the error handler, which nats.go
//     does not set by default: set one, or a refusal looks like a fetch that times out. (The
//     credential receives on the default inbox; a credential issued before integrations had NATS
//     accounts of their own needed nats.CustomInboxPrefix.)
//   - A rotation revokes the credential: the server ends the connection with "authentication
//     revoked". nats.UserCredentials reads the file at every reconnect, so writing the new .creds
//     over the old one is enough while the client reconnects; if it gave up, start it again.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	creds := flag.String("creds", "", "the integration's .creds file")
	consumer := flag.String("consumer", "", "the integration's consumer (nats.consumer)")
	filter := flag.String("filter", "", "the integration's filter subject (nats.filterSubject)")
	flag.Parse()
	if *creds == "" || *consumer == "" || *filter == "" {
		log.Fatal("usage: follow-events -creds <file> -consumer <nats.consumer> -filter <nats.filterSubject>")
	}
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}

	closed := make(chan struct{})
	nc, err := nats.Connect(url,
		nats.Name("follow-events"),
		nats.UserCredentials(*creds),
		nats.MaxReconnects(-1),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Printf("nats: %v", err) // permission refusals arrive here
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if errors.Is(err, nats.ErrAuthRevoked) {
				log.Printf("the credential was revoked (rotated or deleted): reconnecting with %s as it is now", *creds)
			}
		}),
		nats.ReconnectHandler(func(_ *nats.Conn) { log.Printf("reconnected") }),
		nats.ClosedHandler(func(c *nats.Conn) {
			log.Printf("connection closed: %v", c.LastError())
			close(closed)
		}),
	)
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	js, err := nc.JetStream()
	if err != nil {
		log.Fatalf("jetstream: %v", err)
	}
	// The consumer exists (the platform made it): bind to it, with its filter subject.
	sub, err := js.PullSubscribe(*filter, *consumer, nats.Bind("EVENTS", *consumer))
	if err != nil {
		log.Fatalf("bind %s: %v", *consumer, err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Fprintf(os.Stderr, "following %s\n", *consumer)

	out := json.NewEncoder(os.Stdout)
	for {
		select {
		case <-stop:
			_ = nc.Drain()
			return
		case <-closed:
			os.Exit(1)
		default:
		}
		msgs, err := sub.Fetch(100, nats.MaxWait(2*time.Second))
		if err != nil && !errors.Is(err, nats.ErrTimeout) {
			log.Printf("fetch: %v", err)
			time.Sleep(time.Second)
			continue
		}
		for _, m := range msgs {
			meta, _ := m.Metadata()
			var event json.RawMessage = m.Data
			line := map[string]any{"subject": m.Subject, "msgId": m.Header.Get("Nats-Msg-Id"), "event": event}
			if meta != nil {
				line["seq"] = meta.Sequence.Stream
				line["redelivered"] = meta.NumDelivered > 1
			}
			// Handle it here, idempotently: an event not acknowledged within 30 s comes again.
			if err := out.Encode(line); err != nil {
				log.Fatalf("write: %v", err)
			}
			if err := m.Ack(); err != nil {
				log.Printf("ack: %v", err)
			}
		}
	}
}
