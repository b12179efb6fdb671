//! A FIFO ring of `Copy` values with a power-of-two capacity: the links'
//! delay lines and waiting lists, pushed and popped once per packet. Against
//! `VecDeque` it saves the wrap-around arithmetic of each index (a mask
//! instead of a compare and subtract) and keeps head and tail as plain
//! counters.

use std::mem::MaybeUninit;

pub struct Ring<T: Copy> {
    /// The slots; their number is a power of two, or 0 before the first push
    /// (the mask is `buf.len() - 1`). 24 bytes in all, so that both of a
    /// link's rings fit in the link's first cache lines.
    /// Slots outside `[head, head + len)` (masked) may be uninitialised:
    /// a push writes its value straight into its slot, with nothing to
    /// fill a grown buffer with first.
    buf: Box<[MaybeUninit<T>]>,
    /// Index of the first value, not yet reduced by the mask (wraps: the
    /// capacity divides 2^32).
    head: u32,
    len: u32,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Box::new_uninit_slice(0),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Slots held.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Give the slots of an empty ring back (the next push allocates anew).
    #[cold]
    #[inline(never)]
    pub fn release(&mut self) {
        debug_assert!(self.len == 0);
        self.buf = Box::new_uninit_slice(0);
        self.head = 0;
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
            Some(self.slot(self.head))
        }
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let i = self.head.wrapping_add(self.len) as usize & self.mask();
        // SAFETY: `grow` made the slots non-empty, so `i & mask < buf.len()`
        debug_assert!(i < self.buf.len());
        unsafe { self.buf.get_unchecked_mut(i).write(v) };
        self.len += 1;
    }

    /// Drop every value held (they are `Copy`: nothing to run), keeping
    /// the slots; the next push goes to the first (see `rewind`).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.head = 0;
    }

    /// An empty ring's next push goes to its first slot: a ring that holds
    /// one value at a time (a link of one flow at 10^4 flows) keeps using
    /// the same cache line instead of cycling through all its slots' lines.
    #[inline]
    pub fn rewind(&mut self) {
        debug_assert!(self.len == 0);
        self.head = 0;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = *self.slot(self.head);
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
        Some(v)
    }

    /// The slot of index `k` (reduced by the mask), in a non-empty ring.
    /// Unchecked: the bounds checks of the rings' accesses were ~2 % of
    /// the engine's instructions. SAFETY: callers hold `len > 0` and pass
    /// `k = head`, so the slots are a non-empty power of two, `k & mask <
    /// buf.len()`, and the slot was pushed (initialised).
    #[inline(always)]
    fn slot(&self, k: u32) -> &T {
        debug_assert!(self.len > 0 && !self.buf.is_empty());
        unsafe {
            self.buf
                .get_unchecked(k as usize & self.mask())
                .assume_init_ref()
        }
    }

    /// Where the front value is, for a prefetch hint only (never read
    /// through it). For a non-empty ring: an empty one may have no slots,
    /// and its pointer dangles (a prefetch of an unmapped address costs a
    /// page walk before it is dropped).
    #[inline(always)]
    pub fn front_ptr(&self) -> *const T {
        (self.buf.as_ptr() as *const T).wrapping_add(self.head as usize & self.mask())
    }

    /// The value `k` places behind the front, if the ring holds it.
    #[inline(always)]
    pub fn get(&self, k: u32) -> Option<&T> {
        if k < self.len {
            // SAFETY: `k < len`, so the ring is non-empty and the masked
            // index of `head + k` is a pushed (initialised) slot
            Some(unsafe {
                self.buf
                    .get_unchecked(self.head.wrapping_add(k) as usize & self.mask())
                    .assume_init_ref()
            })
        } else {
            None
        }
    }

    /// Values front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let mask = self.mask();
        // SAFETY: the slots of `[head, head + len)` are initialised (pushed)
        (0..self.len).map(move |k| unsafe {
            self.buf[self.head.wrapping_add(k) as usize & mask].assume_init_ref()
        })
    }

    /// Double the capacity (at least 16), keeping the order (the new slots
    /// are left uninitialised).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(16);
        assert!(cap <= 1 << 31, "a ring of more than 2^31 packets");
        let mut buf = Box::new_uninit_slice(cap);
        for (slot, v) in buf.iter_mut().zip(self.iter()) {
            slot.write(*v);
        }
        self.buf = buf;
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

    #[test]
    fn a_released_ring_starts_again_empty() {
        let mut r = Ring::default();
        for i in 0..100u64 {
            r.push_back(i);
        }
        while r.pop_front().is_some() {}
        assert_eq!(r.capacity(), 128);
        r.release();
        assert_eq!((r.capacity(), r.len()), (0, 0));
        for i in 0..20u64 {
            r.push_back(i);
        }
        assert!(r.iter().copied().eq(0..20));
        assert_eq!(r.capacity(), 32);
    }

    #[test]
    fn a_ring_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Ring<u64>>(), 24);
    }
}
