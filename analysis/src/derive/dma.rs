//! The DMA read/write sequencer pair and its 256-byte request split (manual DMA Engine page, issue 4).
