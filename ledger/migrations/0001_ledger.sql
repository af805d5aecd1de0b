-- Ledger schema: runs, their recorded steps, and the constraints that keep
-- the ledger's guarantees inside the database. Safe to apply more than once.

-- Serialise concurrent installs; the lock ends with this script's transaction.
select pg_advisory_xact_lock(hashtext('sms.ledger.migrate'));

create schema if not exists ledger;

create table if not exists ledger.runs (
    run_id        text    not null,
    agent         text    not null,
    tenant_key    text    not null,
    period        text    not null,
    plan_json     jsonb   not null,
    ceiling_minor bigint  not null,
    currency      text    not null,
    spent_minor   bigint  not null default 0,
    step_cursor   integer not null default 0,
    status        text    not null default 'running',
    reason        text    not null default '',
    detail        text    not null default '',
    version       bigint  not null default 0,
    created_at    timestamptz not null default now(),
    updated_at    timestamptz not null default now(),
    constraint runs_pkey primary key (run_id),
    -- Exactly one run per (agent, tenant, period): the database decides the
    -- race between concurrent claims, not the application.
    constraint runs_one_per_period unique (agent, tenant_key, period),
    constraint runs_run_tenant unique (run_id, tenant_key),
    constraint runs_fields_present check (run_id <> '' and agent <> '' and tenant_key <> '' and period <> ''),
    constraint runs_ceiling_positive check (ceiling_minor > 0),
    constraint runs_currency_iso4217 check (currency ~ '^[A-Z]{3}$'),
    constraint runs_spent_non_negative check (spent_minor >= 0),
    constraint runs_cursor_non_negative check (step_cursor >= 0),
    constraint runs_status_known check (status in ('running', 'succeeded', 'halted')),
    -- A run that ends without success always says why, in a code and a sentence.
    constraint runs_halt_has_reason check (status <> 'halted' or (btrim(reason) <> '' and btrim(detail) <> '')),
    constraint runs_reason_only_when_halted check (status = 'halted' or (reason = '' and detail = ''))
);

create table if not exists ledger.steps (
    run_id         text    not null,
    idx            integer not null,
    tenant_key     text    not null,
    ok             boolean not null,
    failure_reason text    not null default '',
    spent_minor    bigint  not null,
    recorded_at    timestamptz not null default now(),
    constraint steps_pkey primary key (run_id, idx),
    constraint steps_run_fkey foreign key (run_id, tenant_key) references ledger.runs (run_id, tenant_key),
    constraint steps_idx_non_negative check (idx >= 0),
    constraint steps_spent_non_negative check (spent_minor >= 0),
    -- A failed step always carries a reason a person can read.
    constraint steps_failure_has_reason check (ok or btrim(failure_reason) <> '')
);

-- The plan, and the terms it was claimed under, never change after the claim.
create or replace function ledger.refuse_claim_change() returns trigger
language plpgsql
set search_path = pg_catalog
as $$
begin
    if new.plan_json is distinct from old.plan_json then
        raise exception using
            errcode = 'LDG01',
            message = format('the plan of run %s is immutable after claim', old.run_id);
    end if;
    if (new.run_id, new.agent, new.tenant_key, new.period, new.ceiling_minor, new.currency)
        is distinct from
       (old.run_id, old.agent, old.tenant_key, old.period, old.ceiling_minor, old.currency) then
        raise exception using
            errcode = 'LDG01',
            message = format('the claim terms of run %s (agent, tenant, period, ceiling) are immutable', old.run_id);
    end if;
    return new;
end
$$;

drop trigger if exists runs_claim_immutable on ledger.runs;
-- The WHEN clause spares ordinary progress updates the function call; the
-- function itself repeats the comparison to say what changed.
create trigger runs_claim_immutable
    before update on ledger.runs
    for each row
    when (new.plan_json is distinct from old.plan_json
          or (new.run_id, new.agent, new.tenant_key, new.period, new.ceiling_minor, new.currency)
             is distinct from
             (old.run_id, old.agent, old.tenant_key, old.period, old.ceiling_minor, old.currency))
    execute function ledger.refuse_claim_change();

-- Row-level security: forced, so the table owner is bound too, and with only
-- tenant-scoped policies, so a connection without a tenant sees and writes nothing.
alter table ledger.runs enable row level security;
alter table ledger.runs force row level security;
alter table ledger.steps enable row level security;
alter table ledger.steps force row level security;

drop policy if exists runs_tenant_isolation on ledger.runs;
create policy runs_tenant_isolation on ledger.runs
    using (tenant_key = nullif(current_setting('app.current_tenant', true), ''))
    with check (tenant_key = nullif(current_setting('app.current_tenant', true), ''));

drop policy if exists steps_tenant_isolation on ledger.steps;
create policy steps_tenant_isolation on ledger.steps
    using (tenant_key = nullif(current_setting('app.current_tenant', true), ''))
    with check (tenant_key = nullif(current_setting('app.current_tenant', true), ''));

-- verify_install reports one row per guarantee the schema carries; every
-- row must have ok = true.
create or replace function ledger.verify_install()
returns table (check_name text, ok boolean, detail text)
language sql
stable
set search_path = pg_catalog
as $$
    with
    rel as (
        select c.oid, c.relname, c.relrowsecurity, c.relforcerowsecurity
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'ledger' and c.relname in ('runs', 'steps') and c.relkind = 'r'
    ),
    con as (
        select r.relname, k.conname, k.contype, pg_get_constraintdef(k.oid) as def
        from pg_constraint k join rel r on r.oid = k.conrelid
    ),
    pol as (
        select tablename, qual, with_check from pg_policies where schemaname = 'ledger'
    )
    select 'tables exist', count(*) = 2, 'ledger.runs and ledger.steps'
    from rel
    union all
    select 'one run per agent, tenant and period',
        exists (select 1 from con where relname = 'runs' and contype = 'u'
                and def = 'UNIQUE (agent, tenant_key, period)'),
        'UNIQUE (agent, tenant_key, period) on ledger.runs'
    union all
    select 'plan immutable after claim',
        exists (select 1 from pg_trigger t join rel r on r.oid = t.tgrelid
                where r.relname = 'runs' and t.tgname = 'runs_claim_immutable' and t.tgenabled <> 'D'),
        'trigger runs_claim_immutable enabled on ledger.runs'
    union all
    select 'halted runs carry a reason and detail',
        exists (select 1 from con where conname = 'runs_halt_has_reason' and contype = 'c'),
        'CHECK runs_halt_has_reason on ledger.runs'
    union all
    select 'failed steps carry a reason',
        exists (select 1 from con where conname = 'steps_failure_has_reason' and contype = 'c'),
        'CHECK steps_failure_has_reason on ledger.steps'
    union all
    select 'row-level security enabled',
        count(*) = 2 and bool_and(relrowsecurity), 'on ledger.runs and ledger.steps'
    from rel
    union all
    select 'row-level security forced',
        count(*) = 2 and bool_and(relforcerowsecurity), 'binds the table owner too'
    from rel
    union all
    select 'every policy is tenant-scoped',
        count(distinct tablename) = 2
            and bool_and(qual like '%app.current_tenant%' and coalesce(with_check, qual) like '%app.current_tenant%'),
        'policies on both tables filter on app.current_tenant, none grants more'
    from pol
    union all
    select 'money is integer minor units',
        not exists (select 1 from information_schema.columns
                    where table_schema = 'ledger'
                      and (data_type in ('real', 'double precision', 'numeric')
                           or (column_name like '%\_minor' and data_type <> 'bigint'))),
        'no float or numeric column; every *_minor column is bigint'
$$;
