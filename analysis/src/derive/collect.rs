//! Collect normalization: packets to 32-byte flits (Time2/Packet2), manual L3530-L3570 (issue 4).
