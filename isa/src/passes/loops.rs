//! Natural loops: a header, the latches that jump back to it, and the blocks in between.

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{BlockData, Function, Terminator};
use crate::passes::edit::{for_each_edge, new_value};

/// One natural loop: every block that reaches a latch without passing the header.
#[derive(Clone, Debug)]
pub(crate) struct Loop {
    /// The block every iteration starts at; it dominates the loop.
    pub header: Block,
    /// The blocks with an edge back to the header.
    pub latches: Vec<Block>,
    /// The blocks of the loop (header included), in index order.
    pub blocks: Vec<Block>,
    member: Vec<bool>,
}

impl Loop {
    /// Whether a block belongs to the loop.
    pub fn contains(&self, b: Block) -> bool {
        self.member.get(b.index()).copied().unwrap_or(false)
    }

    /// The loop's size in instructions, terminators included.
    pub fn size(&self, f: &Function) -> usize {
        self.blocks
            .iter()
            .map(|&b| f.block(b).insts.len() + 1)
            .sum()
    }

    /// The loop's blocks, the header first and the rest in reverse postorder (the order
    /// in which a copy of the body can be built, definitions before uses).
    pub fn blocks_header_first(&self, cfg: &Cfg) -> Vec<Block> {
        let mut blocks = vec![self.header];
        blocks.extend(
            cfg.reverse_postorder()
                .iter()
                .copied()
                .filter(|&b| b != self.header && self.contains(b)),
        );
        blocks
    }

    /// The single block outside the loop that enters it, when it enters with an
    /// unconditional `br` to the header.
    pub fn preheader(&self, f: &Function, cfg: &Cfg) -> Option<Block> {
        let outside: Vec<Block> = cfg
            .predecessors(self.header)
            .iter()
            .copied()
            .filter(|&p| !self.contains(p))
            .collect();
        match outside.as_slice() {
            [p] if matches!(f.block(*p).term, Terminator::Br(t, _) if t == self.header) => Some(*p),
            _ => None,
        }
    }

    /// The single latch, when there is one.
    pub fn single_latch(&self) -> Option<Block> {
        match self.latches.as_slice() {
            [l] => Some(*l),
            _ => None,
        }
    }

    /// The edges that leave the loop, as (from, to).
    pub fn exits(&self, cfg: &Cfg) -> Vec<(Block, Block)> {
        let mut out = Vec::new();
        for &b in &self.blocks {
            for &s in cfg.successors(b) {
                if !self.contains(s) {
                    out.push((b, s));
                }
            }
        }
        out
    }
}

/// Gives every loop `wanted` selects that has no preheader one: a new block that the edges entering the loop
/// go to instead, and that jumps to the header. Header parameters that every entering edge
/// sets to the same value get it directly; the others pass through parameters of the new
/// block. Returns how many preheaders were made (the loops and the graph must then be
/// computed again).
///
/// The new block holds no instruction, so lanes run exactly what they ran before; the
/// simplifier removes it again if nothing moves into it.
pub(crate) fn create_preheaders(f: &mut Function, wanted: impl Fn(&Loop) -> bool) -> usize {
    let cfg = Cfg::new(f);
    let mut made = 0;
    for lp in find_loops(f, &cfg) {
        let h = lp.header;
        if h == f.entry() || lp.preheader(f, &cfg).is_some() || !wanted(&lp) {
            continue;
        }
        let outside: Vec<Block> = cfg
            .predecessors(h)
            .iter()
            .copied()
            .filter(|&p| !lp.contains(p) && cfg.is_reachable(p))
            .collect();
        if outside.is_empty() {
            continue;
        }
        // What the entering edges pass to each header parameter: one value, or several.
        let nparams = f.block(h).params.len();
        let mut same: Vec<Option<Value>> = vec![None; nparams];
        let mut varies = vec![false; nparams];
        for &p in &outside {
            for (t, args) in f.block(p).term.targets() {
                if t != h {
                    continue;
                }
                for (k, &a) in args.iter().enumerate() {
                    match same[k] {
                        None => same[k] = Some(a),
                        Some(v) if v != a => varies[k] = true,
                        Some(_) => {}
                    }
                }
            }
        }
        let pre = Block(f.blocks.len() as u32);
        let mut params = Vec::new();
        let mut header_args = Vec::new();
        for k in 0..nparams {
            let hp = f.block(h).params[k];
            if varies[k] {
                let v = new_value(f, f.value_type(hp));
                params.push(v);
                header_args.push(v);
            } else {
                header_args.push(same[k].unwrap_or(hp));
            }
        }
        let term_loc = f.block(h).term_loc;
        f.blocks.push(BlockData {
            params,
            insts: Vec::new(),
            term: Terminator::Br(h, header_args),
            term_loc,
        });
        for &p in &outside {
            for_each_edge(&mut f.blocks[p.index()].term, |t, args| {
                if *t == h {
                    *t = pre;
                    let mut k = 0;
                    args.retain(|_| {
                        k += 1;
                        varies[k - 1]
                    });
                }
            });
        }
        made += 1;
    }
    made
}

/// The natural loops of the reachable blocks, innermost (smallest) first. Loops sharing a
/// header are one loop.
pub(crate) fn find_loops(f: &Function, cfg: &Cfg) -> Vec<Loop> {
    let n = f.blocks.len();
    let mut loops: Vec<Loop> = Vec::new();
    for &h in cfg.reverse_postorder() {
        let latches: Vec<Block> = cfg
            .predecessors(h)
            .iter()
            .copied()
            .filter(|&p| cfg.is_reachable(p) && cfg.dominates(h, p))
            .collect();
        if latches.is_empty() {
            continue;
        }
        let mut member = vec![false; n];
        member[h.index()] = true;
        let mut work = latches.clone();
        while let Some(b) = work.pop() {
            if member[b.index()] {
                continue;
            }
            member[b.index()] = true;
            work.extend(
                cfg.predecessors(b)
                    .iter()
                    .copied()
                    .filter(|&p| cfg.is_reachable(p)),
            );
        }
        let blocks: Vec<Block> = f.block_ids().filter(|b| member[b.index()]).collect();
        loops.push(Loop {
            header: h,
            latches,
            blocks,
            member,
        });
    }
    loops.sort_by_key(|l| (l.blocks.len(), l.header));
    loops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_module;

    #[test]
    fn nested_loops_innermost_first() {
        let text = "kernel k {\nbb0:\n v0 = const.pred true\n br bb1\nbb1:\n br_if v0, bb2, bb5\nbb2:\n br_if v0, bb3, bb4\nbb3:\n br bb2\nbb4:\n br bb1\nbb5:\n ret\n}\n";
        let m = parse_module(text).unwrap();
        let f = &m.functions[0];
        let cfg = Cfg::new(f);
        let loops = find_loops(f, &cfg);
        assert_eq!(loops.len(), 2);
        assert_eq!(loops[0].header, Block(2));
        assert_eq!(loops[0].blocks, vec![Block(2), Block(3)]);
        assert_eq!(loops[1].header, Block(1));
        assert_eq!(
            loops[1].blocks,
            vec![Block(1), Block(2), Block(3), Block(4)]
        );
        assert_eq!(loops[1].preheader(f, &cfg), Some(Block(0)));
        assert_eq!(loops[0].preheader(f, &cfg), None);
        assert_eq!(loops[1].exits(&cfg), vec![(Block(1), Block(5))]);
    }
}
