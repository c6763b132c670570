--
-- PostgreSQL database dump
--

\restrict adRD7DynwYFEDc7g7cE4480ecbFBGr0ZD54IF805SW8FKAhPs0Ba4IGAMXkrfjX

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: sa_fill_id(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sa_fill_id() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    seq text := pg_get_serial_sequence(quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'id');
BEGIN
    -- SQLite's INTEGER PRIMARY KEY: NULL takes the next id; an explicit id moves the sequence past it
    IF NEW.id IS NULL THEN
        NEW.id := nextval(seq);
    ELSIF NEW.id > coalesce(pg_sequence_last_value(seq::regclass), 0) THEN
        PERFORM setval(seq, NEW.id);
    END IF;
    RETURN NEW;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public._migrations (
    seq bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    applied_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL
);


--
-- Name: _migrations_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public._migrations_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: _migrations_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public._migrations_seq_seq OWNED BY public._migrations.seq;


--
-- Name: event_attendees; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_attendees (
    event_id bigint NOT NULL,
    person_key text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id bigint NOT NULL,
    title text NOT NULL COLLATE pg_catalog."C",
    start_utc text NOT NULL COLLATE pg_catalog."C",
    end_utc text NOT NULL COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT events_check CHECK ((start_utc < end_utc)),
    CONSTRAINT events_title_check CHECK ((title <> ''::text))
);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.events_id_seq OWNED BY public.events.id;


--
-- Name: people; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.people (
    key text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    tz text NOT NULL COLLATE pg_catalog."C",
    work_start text NOT NULL COLLATE pg_catalog."C",
    work_end text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT people_check CHECK ((work_start < work_end)),
    CONSTRAINT people_key_check CHECK (((key <> ''::text) AND (key = lower(key)))),
    CONSTRAINT people_name_check CHECK ((name <> ''::text))
);


--
-- Name: _migrations seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations ALTER COLUMN seq SET DEFAULT nextval('public._migrations_seq_seq'::regclass);


--
-- Name: events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ALTER COLUMN id SET DEFAULT nextval('public.events_id_seq'::regclass);


--
-- Data for Name: _migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public._migrations VALUES (1, 'm001_calendar', '2026-12-04T16:16:22Z');


--
-- Data for Name: event_attendees; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.event_attendees VALUES (1, 'priya');


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES (1, 'Roadmap', '2026-08-31T13:00:00Z', '2026-08-31T14:00:00Z', '2026-12-04T16:16:22Z');


--
-- Data for Name: people; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.people VALUES ('you', 'Jordan Lee', 'Europe/London', '09:00', '17:00');
INSERT INTO public.people VALUES ('priya', 'Priya Raman', 'Europe/London', '09:00', '17:00');


--
-- Name: _migrations_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public._migrations_seq_seq', 1, true);


--
-- Name: events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.events_id_seq', 1, true);


--
-- Name: _migrations _migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations
    ADD CONSTRAINT _migrations_pkey PRIMARY KEY (name);


--
-- Name: event_attendees event_attendees_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_pkey PRIMARY KEY (event_id, person_key);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: people people_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.people
    ADD CONSTRAINT people_pkey PRIMARY KEY (key);


--
-- Name: event_attendees_by_person; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_attendees_by_person ON public.event_attendees USING btree (person_key, event_id);


--
-- Name: events_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_by_time ON public.events USING btree (start_utc, end_utc);


--
-- Name: events events_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_fill_id BEFORE INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: event_attendees event_attendees_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: event_attendees event_attendees_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key);


--
-- PostgreSQL database dump complete
--

\unrestrict adRD7DynwYFEDc7g7cE4480ecbFBGr0ZD54IF805SW8FKAhPs0Ba4IGAMXkrfjX

