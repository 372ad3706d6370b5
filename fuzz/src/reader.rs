//! A tiny reader that turns fuzz bytes into values: fixed-size integers, short length-prefixed
//! strings, and the rest as a body. Missing bytes read as zeros, so every input is usable.

/// Consumes fuzz bytes from the front.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        head
    }

    /// One byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        self.bytes(1).first().copied().unwrap_or(0)
    }

    /// Eight little-endian bytes (missing ones are zero).
    pub fn u64(&mut self) -> u64 {
        let mut buf = [0u8; 8];
        let got = self.bytes(8);
        buf[..got.len()].copy_from_slice(got);
        u64::from_le_bytes(buf)
    }

    /// Four little-endian bytes (missing ones are zero).
    pub fn u32(&mut self) -> u32 {
        let mut buf = [0u8; 4];
        let got = self.bytes(4);
        buf[..got.len()].copy_from_slice(got);
        u32::from_le_bytes(buf)
    }

    /// Eight little-endian bytes as a signed integer.
    pub fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.u64().to_le_bytes())
    }

    /// A chunk of at most 255 bytes: one length byte, then that many bytes.
    pub fn chunk(&mut self) -> &'a [u8] {
        let n = usize::from(self.u8());
        self.bytes(n)
    }

    /// A chunk as text (invalid UTF-8 replaced).
    pub fn string(&mut self) -> String {
        String::from_utf8_lossy(self.chunk()).into_owned()
    }

    /// A chunk as optional text: length byte 255 means absent (no bytes follow).
    pub fn opt_string(&mut self) -> Option<String> {
        match self.data.first() {
            Some(255) => {
                self.bytes(1);
                None
            }
            _ => Some(self.string()),
        }
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.bytes(self.data.len())
    }
}

/// Splits `data` at NUL bytes into at most `n` arguments: the last takes the remainder (its own
/// NULs included, up to the first one). Missing arguments are empty.
pub fn nul_args(data: &[u8], n: usize) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = data.splitn(n, |&b| b == 0).map(<[u8]>::to_vec).collect();
    out.resize(n, Vec::new());
    out
}
