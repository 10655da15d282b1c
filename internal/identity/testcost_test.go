package identity

import (
	"strings"
	"testing"
)

// The test cost is recorded in the PHC string and verifies as usual. Not
// parallel: the other tests of this binary check the real cost.
func TestUseTestHashCost(t *testing.T) {
	UseTestHashCost()
	t.Cleanup(func() { testCostOn.Store(false) })
	enc, err := HashSecret([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=8,t=1,p=1$") {
		t.Errorf("HashSecret = %q; want the test cost recorded", enc)
	}
	if ok, err := VerifySecret(enc, []byte("secret")); !ok || err != nil {
		t.Errorf("VerifySecret(right) = %v, %v; want true", ok, err)
	}
	if ok, err := VerifySecret(enc, []byte("Secret")); ok || err != nil {
		t.Errorf("VerifySecret(wrong) = %v, %v; want false", ok, err)
	}
}
