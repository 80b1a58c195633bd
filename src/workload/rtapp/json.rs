//! The JSON rt-app reads (json-c): `/* */` and `//` comments, trailing commas, and objects whose
//! keys keep their order and may repeat (an rt-app phase lists its events as keys, in order).
//! Errors give the 1-based line and column.

/// A JSON value; objects keep every key in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn kind(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Num(_) => "a number",
            J::Str(_) => "a string",
            J::Arr(_) => "an array",
            J::Obj(_) => "an object",
        }
    }
}

/// Nesting and size limits: a pasted file is bounded before anything is built.
const MAX_DEPTH: usize = 64;
pub const MAX_BYTES: usize = 1 << 20;

struct P<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl P<'_> {
    fn pos(&self) -> String {
        let before = &self.b[..self.i.min(self.b.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
        format!("line {line}, column {col}")
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{}: {what}", self.pos()))
    }

    fn ws(&mut self) -> Result<(), String> {
        loop {
            match self.b.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.b.get(self.i + 1) == Some(&b'*') => {
                    let Some(end) = find(&self.b[self.i + 2..], b"*/") else {
                        return self.err("unterminated /* comment");
                    };
                    self.i += end + 4;
                }
                Some(b'/') if self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.b.get(self.i).is_some_and(|&c| c != b'\n') {
                        self.i += 1;
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<J, String> {
        self.ws()?;
        match self.b.get(self.i) {
            None => self.err("unexpected end of the file"),
            Some(b'{') => self.container(b'}'),
            Some(b'[') => self.container(b']'),
            Some(b'"') => Ok(J::Str(self.string()?)),
            Some(b't') => self.word("true", J::Bool(true)),
            Some(b'f') => self.word("false", J::Bool(false)),
            Some(b'n') => self.word("null", J::Null),
            Some(c) if *c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) => self.err(&format!("unexpected character {:?}", *c as char)),
        }
    }

    fn word(&mut self, w: &str, v: J) -> Result<J, String> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            self.err("expected a value")
        }
    }

    fn number(&mut self) -> Result<J, String> {
        let s = self.i;
        while self
            .b
            .get(self.i)
            .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
        {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.b[s..self.i]).unwrap_or("");
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(J::Num(v)),
            _ => {
                self.i = s;
                self.err(&format!("{t:?} is not a number"))
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.b.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out).or_else(|_| self.err("a string is not UTF-8"));
                }
                Some(b'\\') => {
                    let c = self.b.get(self.i + 1).copied();
                    self.i += 2;
                    match c {
                        Some(b'n') => out.push(b'\n'),
                        Some(b't') => out.push(b'\t'),
                        Some(c @ (b'"' | b'\\' | b'/')) => out.push(c),
                        _ => return self.err("unsupported escape in a string"),
                    }
                }
                Some(&c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn container(&mut self, close: u8) -> Result<J, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(&format!("nested deeper than {MAX_DEPTH}"));
        }
        self.i += 1;
        let mut items = Vec::new();
        let mut keys = Vec::new();
        loop {
            self.ws()?;
            if self.b.get(self.i) == Some(&close) {
                self.i += 1;
                break;
            }
            if close == b'}' {
                if self.b.get(self.i) != Some(&b'"') {
                    return self.err("expected a key in quotes");
                }
                let k = self.string()?;
                self.ws()?;
                keys.push(k);
                match self.b.get(self.i) {
                    Some(b':') => self.i += 1,
                    // a key without a value (`"suspend",`), as rt-app's own examples write it:
                    // read as null
                    Some(c) if *c == b',' || *c == close => {
                        items.push(J::Null);
                        if *c == b',' {
                            self.i += 1;
                        }
                        continue;
                    }
                    _ => return self.err("expected ':' after a key"),
                }
            }
            items.push(self.value()?);
            self.ws()?;
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(c) if *c == close => {}
                _ => return self.err(&format!("expected ',' or '{}'", close as char)),
            }
        }
        self.depth -= 1;
        Ok(if close == b'}' {
            J::Obj(keys.into_iter().zip(items).collect())
        } else {
            J::Arr(items)
        })
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Parses one JSON document as rt-app does.
pub fn parse(text: &str) -> Result<J, String> {
    if text.len() > MAX_BYTES {
        return Err(format!(
            "the file has {} bytes: at most {MAX_BYTES}",
            text.len()
        ));
    }
    let mut p = P {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws()?;
    if p.i < p.b.len() {
        return p.err("text after the document");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_comments_trailing_commas_and_repeated_keys_in_order() {
        let v = parse("{ /* c */ \"a\": 1, // x\n \"b\": [true, null,], \"a\": \"s\", }").unwrap();
        let J::Obj(kv) = v else { panic!() };
        let keys: Vec<&str> = kv.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert!(
            parse("{\"a\": }")
                .unwrap_err()
                .starts_with("line 1, column 7")
        );
        assert!(parse("{\n\"a\" 1}").unwrap_err().starts_with("line 2"));
        assert_eq!(
            parse("{\"s\", \"t\"}").unwrap(),
            J::Obj(vec![("s".into(), J::Null), ("t".into(), J::Null)])
        );
        assert!(parse(&"[".repeat(100)).is_err());
    }
}
