package custodian

// segmentio's decoder is encoding/json's, without its separate
// validating pass and with far fewer allocations: loading the view is
// mostly decoding, and it halves that.

// Loading the view at unlock. The store hands values over one by one in key
// order (decrypting them); decoding them is the larger cost, and runs on
// every core, in batches, while the store goes on reading.
