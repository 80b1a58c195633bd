//! Unpadded base64url (RFC 4648 §5): how a share link carries a file's exact bytes (an rt-app
//! workload, `link::WORKLOAD_FILE_KEY`) in 4 characters per 3 bytes, where percent-encoding JSON's
//! `{}":[]` would take 3 per byte.

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn encode(bytes: &[u8]) -> String {
    let mut o = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..=c.len() {
            o.push(B64[(n >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    o
}

/// Unpadded (or padded) base64url back to bytes; None at a character outside the alphabet or a
/// length no encoding gives.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    if s.len() % 4 == 1 {
        return None;
    }
    let val = |b: u8| B64.iter().position(|&x| x == b).map(|p| p as u32);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.chunks(4) {
        let mut n = 0u32;
        for (i, &b) in c.iter().enumerate() {
            n |= val(b)? << (18 - 6 * i);
        }
        for i in 0..c.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_rfc_4648_vectors_and_refuses_other_text() {
        // RFC 4648 §10 vectors, unpadded, and the two characters base64url has instead of + and /
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), enc);
            assert_eq!(decode(enc).unwrap(), plain.as_bytes());
        }
        assert_eq!(encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(decode("Zm9vYg=="), Some(b"foob".to_vec()));
        for bad in ["Z", "Zm9v!", "Zm+v", "Zm9vY"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
