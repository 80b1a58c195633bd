//! A minimal protobuf writer (wire format: varints, length-delimited fields, packed repeated
//! varints), enough to write Perfetto traces without a protobuf crate or generated code. Fields
//! are written in the order the caller gives them; nothing here knows a schema.

/// An encoded message under construction.
#[derive(Clone, Debug, Default)]
pub struct Pb(Vec<u8>);

const VARINT: u32 = 0;
const LEN: u32 = 2;

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn tag(&mut self, field: u32, wire: u32) {
        self.varint(((field as u64) << 3) | wire as u64);
    }

    /// A `uint32` / `uint64` / `bool` / enum field.
    pub fn uint(&mut self, field: u32, v: u64) {
        self.tag(field, VARINT);
        self.varint(v);
    }

    /// An `int32` / `int64` field (two's complement: a negative value takes ten bytes).
    pub fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }

    /// A `bytes` field, or an embedded message already encoded.
    pub fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, LEN);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    pub fn string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    pub fn message(&mut self, field: u32, m: &Pb) {
        self.bytes(field, &m.0);
    }

    /// A packed repeated varint field (`[packed = true]`); nothing when empty.
    pub fn packed(&mut self, field: u32, vs: &[u64]) {
        if vs.is_empty() {
            return;
        }
        let mut body = Pb::default();
        for &v in vs {
            body.varint(v);
        }
        self.message(field, &body);
    }

    /// Appends fields encoded elsewhere (the same message continued).
    pub fn raw(&mut self, m: &Pb) {
        self.0.extend_from_slice(&m.0);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_wire_format_of_the_protobuf_spec() {
        // the spec's examples: field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 74 65 ...
        let mut m = Pb::default();
        m.uint(1, 150);
        assert_eq!(m.clone().into_bytes(), [0x08, 0x96, 0x01]);
        let mut s = Pb::default();
        s.string(2, "testing");
        assert_eq!(&s.into_bytes()[..2], &[0x12, 0x07]);
        // int32 -2 is ten bytes; packed 4 [3, 270, 86942] is 22 06 03 8E 02 9E A7 05
        let mut n = Pb::default();
        n.int(1, -2);
        assert_eq!(n.len(), 11);
        let mut p = Pb::default();
        p.packed(4, &[3, 270, 86942]);
        assert_eq!(
            p.into_bytes(),
            [0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05]
        );
    }
}
