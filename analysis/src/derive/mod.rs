//! What the vendor compiler derives from mappings: sequencer configurations, fetch/commit
//! sizes, flits (issue 4).
