//! A FIFO ring of `Copy` values with a power-of-two capacity: the links'
//! delay lines and waiting lists, pushed and popped once per packet. Against
//! `VecDeque` it saves the wrap-around arithmetic of each index (a mask
//! instead of a compare and subtract) and keeps head and tail as plain
//! counters.

#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    buf: Vec<T>,
    /// `buf.len() - 1` (`buf.len()` a power of two, or 0 before the first push).
    mask: usize,
    /// Index of the first value, not yet reduced by `mask`.
    head: usize,
    len: usize,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            mask: 0,
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head & self.mask])
        }
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            self.grow(v);
        }
        let i = (self.head + self.len) & self.mask;
        self.buf[i] = v;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head & self.mask];
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
        Some(v)
    }

    /// Values front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len).map(move |k| &self.buf[(self.head + k) & self.mask])
    }

    /// Double the capacity (at least 16), keeping the order; `fill` only
    /// initialises the new slots.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(16);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, fill);
        self.buf = buf;
        self.mask = cap - 1;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    #[test]
    fn same_values_in_the_same_order_as_a_vecdeque() {
        // random pushes and pops through several doublings and wrap-arounds
        let (mut r, mut d) = (Ring::default(), VecDeque::new());
        let mut x: u64 = 12345;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // push-heavy in the first half, pop-heavy in the second
            let push = (x % 100) < if i < 100_000 { 60 } else { 40 };
            if push {
                r.push_back(i);
                d.push_back(i);
            } else {
                assert_eq!(r.pop_front(), d.pop_front());
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.front(), d.front());
        }
        assert!(r.iter().eq(d.iter()));
    }
}
