//! Writes the seed corpora into `corpus/<target>/`, one file per seed, replacing the seeds'
//! earlier versions (other files there, inputs that once failed a target, stay), and the
//! dictionary of the text targets into `a2a.dict`.
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example seed_corpus
//! ```

use std::path::Path;

fn main() -> std::io::Result<()> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let seeds = agentwire_fuzz::seeds();
    for seed in &seeds {
        let dir = corpus.join(seed.target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(&seed.name), &seed.data)?;
    }
    std::fs::write(corpus.with_file_name("a2a.dict"), agentwire_fuzz::dictionary())?;
    println!("wrote {} seeds into {}, and a2a.dict", seeds.len(), corpus.display());
    Ok(())
}
