/* The shim's parallel-kernel launcher (compile_engine_compat/thread_pool.py builds and wires it).
 *
 * A kernel's parallel loop calls TVMBackendParallelLaunch(flambda, cdata, num_task) through the
 * library's context pointer __TVMBackendParallelLaunch; thread_pool.py registers this file's
 * cec_parallel_launch under that name, so every library TVM loads or JIT-compiles afterwards
 * calls it. The contract is TVM's (c_backend_api.h): run flambda(task_id, penv, cdata) once for
 * each task_id in [0, penv->num_task), return 0, or -1 with the error raised in the caller.
 *
 * What differs from TVM 0.27's own pool, and why (docs/performance.md, "Threads"):
 *  - Tasks are claimed, not assigned: the calling thread runs every task no worker has claimed
 *    yet. A worker that is late (asleep, or waiting for a core another library's spinning thread
 *    holds) costs at most its own task, never a wait for its turn.
 *  - Workers spin with the CPU's pause instruction, never sched_yield, and only for a bounded
 *    time: SPIN while launches come within SPIN of each other (a model's kernels), none while
 *    they do not (a kernel between NumPy calls). A spinning worker catches the next kernel in
 *    under a microsecond instead of a 20-35 us futex wake-up; a sleeping one leaves the core to
 *    the other library's threads.
 *  - One pool for the process. A launch while another thread's launch runs, and a launch from
 *    inside a task, run inline on the calling thread as one task (as TVM does on one core).
 *  - After fork() the child starts its own workers at its first launch.
 * penv->sync_handle has TVM's layout (one atomic int per 64 bytes and task), so TVM's own
 * TVMBackendParallelBarrier works on it: num_task never exceeds the pool's threads, and a thread
 * blocked in a barrier holds one task, so each task still unclaimed has a free thread.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);
/* TVM-FFI's error functions, passed in by cec_pool_init (no link-time dependency on TVM). */
typedef void (*MoveFromRaisedFn)(void** result);
typedef void (*SetRaisedFn)(void* error);
typedef int (*DecRefFn)(void* object);
typedef void (*SetRaisedFromCStrFn)(const char* kind, const char* message);

#define MAX_THREADS 64
#define SYNC_STRIDE 16 /* TVM's barrier: sync_handle[task_id * 16] is that task's counter */
#define SHORT_GAPS_TO_SPIN 4
#define MAX_SHORT_GAPS 8

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define CPU_RELAX() ((void)0)
#endif

static struct {
  /* The launch being run: its generation << 32 | task count << 16 | next unclaimed task. A
   * worker claims a task with one compare-and-swap, which fails once a later launch replaced
   * the word, so a late worker never runs a task of the wrong launch. */
  _Alignas(64) _Atomic uint64_t claim;
  /* The workers' futex word: one step per launch. */
  _Alignas(64) _Atomic uint32_t generation;
  _Atomic int sleeping_workers;
  /* The launcher's futex word: tasks of the current launch not finished yet. */
  _Alignas(64) _Atomic int pending;
  _Atomic int launcher_sleeps;
  /* How long an idle worker spins now: spin_ns while launches come close together, else 0. */
  _Atomic long window_ns;
  _Alignas(64) FTVMParallelLambda flambda;
  void* cdata;
  TVMParallelGroupEnv env;
  _Atomic(void*) error; /* the first task error of the current launch (an owned handle) */
  _Atomic int failed;
  _Atomic uint64_t launches; /* calls, inline ones included (tests read it) */
  _Atomic uint64_t worker_tasks; /* tasks the workers ran (tests read it) */
  _Alignas(64) _Atomic int sync[MAX_THREADS * SYNC_STRIDE];
  int threads;
  int workers_started;
  int short_gaps;
  long spin_ns;
  long wait_ns;
  long last_end_ns;
  pthread_mutex_t lock;
  MoveFromRaisedFn move_from_raised;
  SetRaisedFn set_raised;
  DecRefFn dec_ref;
  SetRaisedFromCStrFn set_raised_from_c_str;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .threads = 1};

static __thread int in_task;
static __thread int is_worker;

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void futex_wait(void* word, uint32_t expected) {
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(void* word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void keep_first_error(void) {
  void* error = NULL;
  void* none = NULL;
  pool.move_from_raised(&error);
  if (error != NULL && !atomic_compare_exchange_strong(&pool.error, &none, error))
    pool.dec_ref(error);
}

/* Run tasks of launch `generation` until none is left unclaimed. */
static void run_tasks(uint32_t generation) {
  uint64_t claim = atomic_load_explicit(&pool.claim, memory_order_acquire);
  for (;;) {
    uint32_t next = (uint32_t)(claim & 0xffff);
    uint32_t count = (uint32_t)((claim >> 16) & 0xffff);
    if ((uint32_t)(claim >> 32) != generation || next >= count) return;
    if (!atomic_compare_exchange_weak_explicit(&pool.claim, &claim, claim + 1,
                                               memory_order_acq_rel, memory_order_acquire))
      continue;
    if (is_worker) atomic_fetch_add_explicit(&pool.worker_tasks, 1, memory_order_relaxed);
    in_task = 1;
    int status = pool.flambda((int)next, &pool.env, pool.cdata);
    in_task = 0;
    if (status != 0) {
      atomic_store(&pool.failed, 1);
      keep_first_error();
    }
    /* seq_cst, with the launcher's store of launcher_sleeps: one of the two sees the other. */
    if (atomic_fetch_sub(&pool.pending, 1) == 1 && atomic_load(&pool.launcher_sleeps))
      futex_wake_all(&pool.pending);
    claim = atomic_load_explicit(&pool.claim, memory_order_acquire);
  }
}

/* Spin while *word == expected, for at most budget_ns, then sleep until it changes. */
static void wait_while_equal(_Atomic uint32_t* word, uint32_t expected, long budget_ns,
                             _Atomic int* sleepers) {
  long deadline = now_ns() + budget_ns;
  unsigned spins = 0;
  while (atomic_load_explicit(word, memory_order_acquire) == expected) {
    CPU_RELAX();
    if ((++spins & 63) != 0 || now_ns() < deadline) continue;
    atomic_fetch_add(sleepers, 1); /* seq_cst: the waker reads it after changing *word */
    futex_wait((void*)word, expected);
    atomic_fetch_sub(sleepers, 1);
  }
}

static void* worker(void* arg) {
  is_worker = 1;
  uint32_t seen = (uint32_t)(uintptr_t)arg;
  for (;;) {
    long window = atomic_load_explicit(&pool.window_ns, memory_order_relaxed);
    wait_while_equal(&pool.generation, seen, window, &pool.sleeping_workers);
    seen = atomic_load_explicit(&pool.generation, memory_order_acquire);
    run_tasks(seen);
  }
  return NULL;
}

static int run_inline(FTVMParallelLambda flambda, void* cdata) {
  _Atomic int counter[SYNC_STRIDE] = {0};
  TVMParallelGroupEnv env = {(void*)counter, 1};
  return flambda(0, &env, cdata);
}

static void start_workers(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* Workers inherit a mask that blocks every signal: Ctrl-C and the like go to Python's threads. */
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  uintptr_t generation = atomic_load(&pool.generation);
  int running = 1; /* the launching thread */
  for (int i = 1; i < pool.threads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, worker, (void*)generation) != 0) break;
    pthread_setname_np(thread, "cec-pool");
    ++running;
  }
  pthread_sigmask(SIG_SETMASK, &before, NULL);
  pthread_attr_destroy(&attr);
  pool.threads = running;
  pool.workers_started = 1;
}

/* Launches that come within spin_ns of the previous one's end keep the workers spinning. */
static void update_spin_window(long start_ns) {
  if (start_ns - pool.last_end_ns <= pool.spin_ns) {
    if (pool.short_gaps < MAX_SHORT_GAPS) ++pool.short_gaps;
  } else {
    pool.short_gaps = pool.short_gaps > 2 ? pool.short_gaps - 2 : 0;
  }
  long window = pool.short_gaps >= SHORT_GAPS_TO_SPIN ? pool.spin_ns : 0;
  atomic_store_explicit(&pool.window_ns, window, memory_order_relaxed);
}

int cec_parallel_launch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  atomic_fetch_add_explicit(&pool.launches, 1, memory_order_relaxed);
  if (in_task || num_task == 1 || pool.threads <= 1) return run_inline(flambda, cdata);
  if (pthread_mutex_trylock(&pool.lock) != 0) return run_inline(flambda, cdata);
  if (!pool.workers_started) start_workers();
  update_spin_window(now_ns());
  int count = pool.threads;
  if (num_task > 0 && num_task < count) count = num_task;
  for (int i = 0; i < count; ++i)
    atomic_store_explicit(&pool.sync[i * SYNC_STRIDE], 0, memory_order_relaxed);
  pool.flambda = flambda;
  pool.cdata = cdata;
  pool.env.sync_handle = (void*)pool.sync;
  pool.env.num_task = count;
  atomic_store_explicit(&pool.error, NULL, memory_order_relaxed);
  atomic_store_explicit(&pool.failed, 0, memory_order_relaxed);
  atomic_store_explicit(&pool.pending, count, memory_order_relaxed);
  uint32_t generation = atomic_load_explicit(&pool.generation, memory_order_relaxed) + 1;
  atomic_store_explicit(&pool.claim, ((uint64_t)generation << 32) | ((uint64_t)count << 16),
                        memory_order_release);
  atomic_store(&pool.generation, generation); /* seq_cst: then read sleeping_workers */
  if (atomic_load(&pool.sleeping_workers) > 0) futex_wake_all(&pool.generation);
  run_tasks(generation);
  long deadline = now_ns() + pool.wait_ns;
  unsigned spins = 0;
  int left;
  while ((left = atomic_load_explicit(&pool.pending, memory_order_acquire)) != 0) {
    CPU_RELAX();
    if ((++spins & 63) != 0 || now_ns() < deadline) continue;
    atomic_store(&pool.launcher_sleeps, 1);
    futex_wait(&pool.pending, (uint32_t)left);
    atomic_store(&pool.launcher_sleeps, 0);
  }
  void* error = atomic_exchange(&pool.error, NULL);
  int failed = atomic_load(&pool.failed);
  pool.last_end_ns = now_ns();
  pthread_mutex_unlock(&pool.lock);
  if (!failed) return 0;
  if (error == NULL) {
    pool.set_raised_from_c_str("RuntimeError", "a parallel task failed without an error");
  } else {
    pool.set_raised(error);
    pool.dec_ref(error);
  }
  return -1;
}

static void in_forked_child(void) {
  /* The child has none of the parent's workers, and maybe a lock a parent thread held. */
  pthread_mutex_init(&pool.lock, NULL);
  pool.workers_started = 0;
  atomic_store(&pool.sleeping_workers, 0);
  atomic_store(&pool.launcher_sleeps, 0);
  in_task = 0;
}

int cec_pool_init(int threads, long spin_ns, long wait_ns, void* move_from_raised,
                  void* set_raised, void* dec_ref, void* set_raised_from_c_str) {
  static int initialized;
  if (initialized) return 0;
  pool.threads = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
  pool.spin_ns = spin_ns;
  pool.wait_ns = wait_ns;
  pool.move_from_raised = (MoveFromRaisedFn)move_from_raised;
  pool.set_raised = (SetRaisedFn)set_raised;
  pool.dec_ref = (DecRefFn)dec_ref;
  pool.set_raised_from_c_str = (SetRaisedFromCStrFn)set_raised_from_c_str;
  initialized = 1;
  return pthread_atfork(NULL, NULL, in_forked_child);
}

int cec_pool_threads(void) { return pool.threads; }

uint64_t cec_pool_launches(void) { return atomic_load(&pool.launches); }

uint64_t cec_pool_worker_tasks(void) { return atomic_load(&pool.worker_tasks); }
