/** What a skill is for: instructions to follow (default), a role to take, or a tool-like recipe. */
export type SkillKind = 'instruction' | 'persona' | 'tool'

/**
 * One skill: a Markdown body with YAML front matter (the Agent Skills format). A skill found in a
 * workspace keeps its `path` and loads its body only when it is used.
 */
export interface Skill {
  /** kebab-case, 1–64 characters; for `dir/SKILL.md` it matches the folder's name. */
  name: string
  /** What it does and when to use it (≤ 1024 characters). */
  description: string
  /** `allowed-tools` as given (entries `Tool` or `Tool(pattern)`); undefined: no tools. */
  allowedTools?: string[]
  /** The Skill tool refuses it; only a host or a user may use it. */
  disableModelInvocation?: boolean
  kind?: SkillKind
  tags?: string[]
  version?: string
  /** Agent Skills spec fields, kept as given. */
  license?: string
  compatibility?: string
  metadata?: Record<string, unknown>
  /** The instructions (Markdown after the front matter). Inline skills give it here. */
  body?: string
}

/** Where a listed skill came from. */
export type SkillSource =
  { kind: 'workspace'; path: string } | { kind: 'host'; path: string } | { kind: 'inline' }

/** A skill as the registry lists it: front matter loaded, body read on first use. */
export interface SkillEntry {
  skill: Skill
  source: SkillSource
  /** The body's first few KiB, for search scoring (the whole body loads on use). */
  bodyHead?: string
  /**
   * The body, and the files bundled beside a `dir/SKILL.md`, listed on first use: workspace paths
   * for workspace skills, `skill://<name>/<file>` for host skills ({@link SkillEntry.readFile}).
   */
  loadBody(): Promise<{ body: string; files: string[] }>
  /**
   * Read-only access to the skill's own folder, for skills whose folder is outside the workspace
   * (host skills; their bundled files are listed as `skill://<name>/<file>`): at most `maxBytes`
   * of the file at `relative` (`/`-separated, inside the folder). Paths or symlinks that leave
   * the folder are refused (`path_escape`), a larger file is `too_large`.
   */
  readFile?(relative: string, maxBytes: number): Promise<Uint8Array>
}

/** A skill file that was skipped, and why. */
export interface SkillDiagnostic {
  path: string
  message: string
}

/** What `session.skills()` returns. */
export interface SkillsReport {
  skills: {
    name: string
    description: string
    kind: SkillKind
    tags: string[]
    allowed_tools: string[] | null
    disable_model_invocation: boolean
    source: SkillSource
  }[]
  diagnostics: SkillDiagnostic[]
}

/** Limits of skill files and discovery. */
export const SKILL_LIMITS = {
  maxNameChars: 64,
  maxDescriptionChars: 1024,
  /** A SKILL.md larger than this is skipped unread. */
  maxFileBytes: 1024 * 1024,
  /** Front matter longer than this is skipped (YAML has no size limit of its own). */
  maxFrontMatterChars: 64 * 1024,
  /** Aliases a front matter may expand (a YAML bomb is refused). */
  maxAliasCount: 100,
  maxDepth: 64,
  /** Skills a session holds; later files are skipped with a diagnostic. */
  maxSkills: 2000,
  /** Entries visited while discovering (directories and files). */
  maxEntries: 50_000,
  /** The catalog in the agent loop's system prompt. */
  maxCatalogChars: 8000,
  searchDefaultLimit: 5,
  searchMaxLimit: 20,
  /** Bundled files listed with a skill's body. */
  maxBundledFiles: 200,
  /** Largest bundled file `read` opens through `skill://<name>/<file>`. */
  maxBundledFileBytes: 8 * 1024 * 1024,
} as const

/** Default skill folders of a workspace (`a3s` is A3S Code, the reference runtime). */
export const DEFAULT_SKILL_DIRS = ['.agents/skills', '.claude/skills', '.a3s/skills'] as const

/** `SessionOptions.skills`. */
export interface SkillsOptions {
  /** Workspace folders searched in order (default {@link DEFAULT_SKILL_DIRS}). */
  dirs?: string[]
  /** Skills given in code; they come after the folders' (a duplicate name wins). */
  inline?: Skill[]
  /**
   * Host folders (Node): a loader that lists their skills, set by `isoagent/node`'s
   * `hostSkillDirs(...)`. Skills from it come between the workspace's and the inline ones.
   */
  host?: () => Promise<{ entries: SkillEntry[]; diagnostics: SkillDiagnostic[] }>
  /** A `persona` skill whose body replaces the role section of the agent loop's system prompt. */
  persona?: string
}
