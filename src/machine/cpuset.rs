//! A fixed-size CPU bitmap (the kernel's `struct cpumask`), printed as the kernel prints
//! cpulists (`0-1,256-257`).

use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CpuSet {
    words: Vec<u64>,
}

impl CpuSet {
    pub fn new(nr_cpus: usize) -> Self {
        CpuSet {
            words: vec![0; nr_cpus.div_ceil(64)],
        }
    }

    pub fn set(&mut self, cpu: usize) {
        self.words[cpu / 64] |= 1 << (cpu % 64);
    }

    pub fn contains(&self, cpu: usize) -> bool {
        self.words
            .get(cpu / 64)
            .is_some_and(|w| w & (1 << (cpu % 64)) != 0)
    }

    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn union_with(&mut self, other: &CpuSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }

    pub fn is_subset_of(&self, other: &CpuSet) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
}

impl fmt::Display for CpuSet {
    /// The kernel's `%*pbl` cpulist format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cpulist(self.iter().map(|c| c as u32)))
    }
}

/// Ascending CPU numbers in the kernel's `%*pbl` cpulist format (`0-3,8,10-11`).
pub fn cpulist(cpus: impl Iterator<Item = u32>) -> String {
    let mut s = String::new();
    let mut it = cpus.peekable();
    while let Some(start) = it.next() {
        let mut end = start;
        while it.peek() == Some(&(end + 1)) {
            end = it.next().unwrap_or(end);
        }
        if !s.is_empty() {
            s.push(',');
        }
        if end == start {
            s += &start.to_string();
        } else {
            s += &format!("{start}-{end}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_cpulist_like_the_kernel() {
        let mut s = CpuSet::new(512);
        for c in [0, 1, 256, 257, 300] {
            s.set(c);
        }
        assert_eq!(s.to_string(), "0-1,256-257,300");
        assert_eq!(s.weight(), 5);
        assert!(s.contains(257) && !s.contains(2));
    }
}
