package custodian_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/phc-project/phc/custodian"
	"github.com/phc-project/phc/graph/cayley"
	"github.com/phc-project/phc/internal/store"
	"github.com/phc-project/phc/internal/vault"
	"github.com/phc-project/phc/schema"
)

// The core flow: an application proposes a memory, the owner confirms it
// into a persona and grants a second application read access for a purpose;
// that application receives it, then the owner corrects and deletes it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "phc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	password := []byte("correct horse battery staple")
	secretKey, err := vault.Create(filepath.Join(dir, "vault"), password)
	if err != nil {
		log.Fatal(err)
	}
	v, err := vault.Open(filepath.Join(dir, "vault"))
	if err != nil {
		log.Fatal(err)
	}
	val, err := schema.New()
	if err != nil {
		log.Fatal(err)
	}
	svc, err := custodian.New(custodian.Config{Store: store.NewMemory(), Graph: cayley.OpenMemory(), Vault: v, Schema: val})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	// The owner unlocks and authenticates with the session token.
	session, err := svc.Unlock(ctx, password, secretKey)
	if err != nil {
		log.Fatal(err)
	}
	owner, _ := svc.Authenticate(ctx, session)

	// Two registered applications, a persona, and two separate decisions:
	// the tutor may contribute learning.*, the calendar may read it.
	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	_, _, err = svc.CreatePersona(ctx, owner, input[custodian.PersonaInput](svc, []byte(`{"id":"learning","name":"Learning"}`)))
	must(err)
	for _, name := range []string{"tutor", "calendar"} {
		_, err := svc.AddConsumer(ctx, owner, input[custodian.ConsumerInput](svc, []byte(`{"name":"`+name+`","secret":"a-long-secret-for-`+name+`"}`)))
		must(err)
	}
	expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	_, err = svc.CreateGrant(ctx, owner, input[custodian.GrantInput](svc, []byte(`{"recipient":{"kind":"consumer","id":"tutor"},"purpose":"tutoring",
		"operations":["contribute"],"selectors":{"keys":["learning.*"]},"expires_at":"`+expires+`"}`)))
	must(err)
	_, err = svc.CreateGrant(ctx, owner, input[custodian.GrantInput](svc, []byte(`{"recipient":{"kind":"consumer","id":"calendar"},"purpose":"scheduling",
		"operations":["read"],"selectors":{"personas":["learning"]},"expires_at":"`+expires+`"}`)))
	must(err)
	principal := func(name, mode string) custodian.Principal {
		tok, err := svc.MintServiceToken(ctx, input[custodian.TokenRequest](svc, []byte(`{"consumer":"`+name+`","secret":"a-long-secret-for-`+name+`","scope":"*","mode":"`+mode+`"}`)))
		must(err)
		p, err := svc.Authenticate(ctx, tok.Token)
		must(err)
		return p
	}
	tutor, calendar := principal("tutor", "write"), principal("calendar", "read")

	// The tutor proposes; the proposal waits in the owner's review queue.
	prop, err := svc.Propose(ctx, tutor, input[custodian.ProposalInput](svc, []byte(`{"key":"learning.spanish.schedule","value":"mon, thu",
		"kind":"commitment","assertion":"reported","reported":{"app":"tutor"}}`)))
	must(err)
	queue, _ := svc.Review(ctx, owner)
	fmt.Println("proposal:", prop.Status, "| review queue:", len(queue))

	show := func() {
		res, err := svc.Context(ctx, calendar, custodian.ContextQuery{Purpose: "scheduling"})
		must(err)
		fmt.Print("calendar receives ", len(res.Claims), " claim(s)")
		for _, c := range res.Claims {
			fmt.Printf(": %s = %s (v%d)", c.Key, c.Value, c.Version)
		}
		fmt.Println()
	}
	show()

	// An application can never confirm, not even its own proposal.
	_, err = svc.Confirm(ctx, tutor, prop.ProposalID, input[custodian.ConfirmInput](svc, []byte(`{"personas":["learning"]}`)))
	fmt.Println("tutor confirms:", custodian.KindOf(err))

	// The owner confirms it into the Learning persona.
	w, err := svc.Confirm(ctx, owner, prop.ProposalID, input[custodian.ConfirmInput](svc, []byte(`{"personas":["learning"]}`)))
	must(err)
	fmt.Printf("confirmed: %s v%d %v written by %s\n", w.Claim.Status, w.Claim.Version, w.Claim.Personas, w.Claim.WrittenBy)
	show()

	// A correction is a new version; the old one is superseded.
	_, err = svc.Correct(ctx, owner, w.Claim.ID, input[custodian.CorrectionInput](svc, []byte(`{"value":"tue"}`)))
	must(err)
	show()

	// Deletion erases it from every version and from context.
	_, err = svc.DeleteClaim(ctx, owner, w.Claim.ID)
	must(err)
	show()

	check, err := svc.VerifyReceipts(ctx, owner)
	must(err)
	fmt.Println("receipts:", check.Count, "ok:", check.OK)

	// Output:
	// proposal: proposed | review queue: 1
	// calendar receives 0 claim(s)
	// tutor confirms: session_required
	// confirmed: active v1 [learning] written by tutor
	// calendar receives 1 claim(s): learning.spanish.schedule = "mon, thu" (v1)
	// calendar receives 1 claim(s): learning.spanish.schedule = "tue" (v2)
	// calendar receives 0 claim(s)
	// receipts: 16 ok: true
}
