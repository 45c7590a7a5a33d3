//! Maps keyed by the trace's handles (and other 64-bit keys it gives, such as sequence
//! numbers).
//!
//! Every recorded command looks up its command buffer, every bind its objects: the
//! lookups are on the replay's hot path. Handles are pointers or small counters, which a
//! seeded multiply-fold hash spreads well at a fraction of SipHash's cost; the seed is
//! random per process, so a trace cannot be made to collide on purpose.

use std::collections::HashMap;

/// A map from a Vulkan handle (as the trace records it), or another 64-bit key from the
/// trace, to `V`.
pub type HandleMap<V> = HashMap<u64, V, foldhash::fast::RandomState>;
