//! What the fracture benches share: timing steps of a scene that runs its whole story.

use std::time::{Duration, Instant};

use shatter_engine::World;

/// A scene stepped for timing: one run goes on across criterion's samples and is rebuilt
/// (untimed) when it has taken `steps` steps, so a mean covers whole runs. Rebuilding at the start
/// of every sample instead would time only each run's first steps.
pub struct RunningScene<F: Fn() -> World> {
    build: F,
    world: World,
    taken: usize,
    steps: usize,
}

impl<F: Fn() -> World> RunningScene<F> {
    /// The scene `build` makes, rebuilt every `steps` steps.
    pub fn new(build: F, steps: usize) -> Self {
        let world = build();
        Self {
            build,
            world,
            taken: 0,
            steps,
        }
    }

    /// Time of `iterations` steps of `dt` on `pool`.
    pub fn time(&mut self, iterations: u64, dt: f64, pool: &rayon::ThreadPool) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iterations {
            if self.taken == self.steps {
                self.world = (self.build)();
                self.taken = 0;
            }
            let start = Instant::now();
            pool.install(|| self.world.step(dt)).expect("the scene steps");
            total += start.elapsed();
            self.taken += 1;
        }
        total
    }
}
