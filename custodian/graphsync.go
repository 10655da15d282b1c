package custodian

import (
	"github.com/phc-project/phc/custodian/internal/model"
)

// awaitGraph waits until the graph holds every write st has committed.
func (st *state) awaitGraph(op string) error {
	if !st.Lag.Wait() {
		return model.Internalf(op, "the graph could not follow the store")
	}
	return nil
}
