//! Prints the ISA of a kernel file (a development aid; `metalsim asm` is the real command).
fn main() {
    let path = std::env::args().nth(1).expect("usage: lower_file FILE");
    let text = std::fs::read_to_string(&path).expect("read");
    let (m, diags, sources) = metalsim_frontend::compile_str(&path, &text);
    eprint!("{}", metalsim_frontend::render(&diags, &sources, false));
    if let Some(m) = m {
        print!("{m}");
    }
}
