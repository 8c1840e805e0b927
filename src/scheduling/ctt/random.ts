/**
 * A small seeded PRNG (xorshift128, seeded through splitmix32). The solver must be
 * reproducible for a given seed and iteration budget, which Math.random cannot give.
 * Not shared with the other solver's generator (the exam solver's, src/exams/solver/random.ts, is sfc32):
 * each solver's results for a seed, its benchmark tables' included, come from its own sequence.
 */
export class SeededRandom {
  private x: number;
  private y: number;
  private z: number;
  private w: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let t = s ^ (s >>> 16);
      t = Math.imul(t, 0x21f0aaad);
      t ^= t >>> 15;
      t = Math.imul(t, 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
    this.x = splitmix();
    this.y = splitmix();
    this.z = splitmix();
    this.w = splitmix() | 1; // never the all-zero state
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const t = this.x ^ (this.x << 11);
    this.x = this.y;
    this.y = this.z;
    this.z = this.w;
    this.w = this.w ^ (this.w >>> 19) ^ (t ^ (t >>> 8));
    return this.w >>> 0;
  }

  /** Uniform in [0, 1). */
  nextFloat(): number {
    return this.nextUint32() * 2.3283064365386963e-10;
  }

  /** Uniform integer in [0, n). */
  nextInt(n: number): number {
    return Math.floor(this.nextUint32() * 2.3283064365386963e-10 * n);
  }
}
