"""Northwind (jpwhite3's SQLite edition): a seeded embedded builder and a real-data adapter.

The benchmark's database is jpwhite3/northwind-SQLite3 `dist/northwind.db`: Microsoft's classic
Northwind (830 orders, dates shifted +20 years to 2016-07-04 .. 2018-05-06 by `update.sql`) plus
~15,450 orders that upstream's `populate.py` "pumped" in with unseeded random dates from 2012-07-10
to the day it ran. That file cannot be regenerated exactly, so the embedded builder imitates its
shape, not its rows:

* Schema: the 13 tables are created from the upstream DDL verbatim (column names, declared types,
  keys, checks), plus the 17 upstream views, so SQL written against the real file runs unchanged.
* Dates are TEXT 'YYYY-MM-DD', the format `update.sql` leaves behind (`date(x, '+20 year')`), so
  `strftime('%Y', OrderDate)` behaves as on the real data.
* Two order blocks, like the real file: a "classic" block (830 of 16,282 orders, scaled with the
  `orders` option) on weekdays between 2016-07-04 and 2018-05-06 with a rising order rate, and an
  "extended" block dated uniformly from 2012-07-10 to 2023-06-30 whose OrderIDs follow the classic
  ones without being in date order (as upstream's pump left them).
* Everything else follows the classic data's distributions: 1-5 lines per order with the real line
  count shares; quantities mostly multiples of 5; ~30 % of lines discounted by 5-25 % depending
  on the customer; RequiredDate = OrderDate + 28 days (sometimes 14 or 42); shipping lag 1-37
  days, NULL ShippedDate when the ship date would fall after the snapshot date; freight grows
  with the shipped quantity and the carrier; employee and carrier shares as in the real orders;
  customers are skewed (a few large accounts), and 4 of 93 customers never ordered (89 of 93
  have orders in the real dump). Orders dated before 2017 are priced from the previous price list
  (80 % of today's), as Microsoft's data has older unit prices on its older orders.
* Names are fictional (companies, people, products, carriers); countries, cities, postal-code
  and phone shapes and the country -> Region mapping of `update.sql` are realistic. No row of the
  real data is copied; the real data is only read at run time by `build_real`.

`build_real` accepts the real `northwind.db` (copied table by table, views, indexes, triggers and
sqlite_sequence included) or a folder with upstream's `create.sql` + `update.sql` dump, executed in
the order of upstream's makefile. A folder that holds `northwind.db` is read as that database.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
import sqlite3
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.sqlite_db import new_database, open_readonly, require_tables, write_meta

SOURCE = "northwind"
BUILDER_VERSION = 1
DEFAULT_ORDERS = 16282
# Below ~200 orders the extended block cannot give every ordering customer two distinct years.
MIN_ORDERS = 200
MAX_ORDERS = 200_000
OPTION_NAMES = ("orders",)

REQUIRED: dict[str, list[str]] = {
    "Customers": ["CustomerID", "CompanyName", "City", "Country"],
    "Orders": ["OrderID", "CustomerID", "EmployeeID", "OrderDate", "ShippedDate", "ShipVia", "Freight"],
    "Order Details": ["OrderID", "ProductID", "UnitPrice", "Quantity", "Discount"],
    "Products": ["ProductID", "ProductName", "SupplierID", "CategoryID", "UnitPrice"],
    "Categories": ["CategoryID", "CategoryName"],
}

DDL_FILE = Path(__file__).with_name("northwind_ddl.sql")
_CREATE = re.compile(r"CREATE (TABLE|VIEW) \[([^\]]+)\]")


def _read_sql(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(path, f"is not UTF-8 text: {exc}", "a SQL script") from exc
    except OSError as exc:
        raise SourceError(path, f"cannot be read: {exc}", "a readable SQL script") from exc


def read_ddl(path: Path = DDL_FILE) -> dict[str, tuple[tuple[str, str], ...]]:
    """{"TABLE": ..., "VIEW": ...}: (name, statement) pairs in file order, each statement as
    sqlite_master will store it (the text between leading `--` comments and its `;` + newline)."""
    found: dict[str, list[tuple[str, str]]] = {"TABLE": [], "VIEW": []}
    for chunk in _read_sql(path).split(";\n"):
        statement = chunk.strip()
        while statement.startswith("--"):
            statement = statement.partition("\n")[2].strip()
        if not statement:
            continue
        match = _CREATE.match(statement)
        if match is None:
            raise SourceError(
                path, f"statement {statement[:40]!r} is not a CREATE", "CREATE TABLE|VIEW [name]"
            )
        found[match[1]].append((match[2], statement))
    return {kind: tuple(pairs) for kind, pairs in found.items()}


_DDL = read_ddl()
TABLE_DDL = _DDL["TABLE"]
VIEW_DDL = _DDL["VIEW"]


# update.sql overwrites Region with a macro-region for these countries (Customers, Orders.ShipRegion,
# Suppliers); elsewhere the original state/province survives.
UPDATE_REGION: dict[str, str] = {
    "UK": "British Isles",
    "Ireland": "British Isles",
    "USA": "North America",
    "Canada": "North America",
    "Mexico": "Central America",
    "Argentina": "South America",
    "Brazil": "South America",
    "Venezuela": "South America",
    "Poland": "Eastern Europe",
    "Sweden": "Northern Europe",
    "Denmark": "Northern Europe",
    "Spain": "Southern Europe",
    "Italy": "Southern Europe",
    "Portugal": "Southern Europe",
    "Germany": "Western Europe",
    "France": "Western Europe",
    "Belgium": "Western Europe",
    "Switzerland": "Western Europe",
    "Austria": "Western Europe",
    "Norway": "Scandinavia",
    "Finland": "Scandinavia",
    "Japan": "Eastern Asia",
    "Singapore": "South-East Asia",
    "Netherlands": "Northern Europe",
}

# city, language, postal-code shape, phone shape, native region; '#' = digit, 'X' = letter.
CITIES: dict[str, list[tuple[str, str, str, str, str | None]]] = {
    "USA": [
        ("Seattle", "en", "981##", "(206) 555-####", "WA"),
        ("Portland", "en", "972##", "(503) 555-####", "OR"),
        ("San Francisco", "en", "941##", "(415) 555-####", "CA"),
        ("Boise", "en", "837##", "(208) 555-####", "ID"),
        ("Albuquerque", "en", "871##", "(505) 555-####", "NM"),
        ("Anchorage", "en", "995##", "(907) 555-####", "AK"),
        ("Denver", "en", "802##", "(303) 555-####", "CO"),
        ("Austin", "en", "787##", "(512) 555-####", "TX"),
        ("Chicago", "en", "606##", "(312) 555-####", "IL"),
        ("Boston", "en", "021##", "(617) 555-####", "MA"),
        ("Spokane", "en", "992##", "(509) 555-####", "WA"),
        ("Sacramento", "en", "958##", "(916) 555-####", "CA"),
    ],
    "Germany": [
        ("Berlin", "de", "1####", "030-#######", None),
        ("München", "de", "80###", "089-#######", None),
        ("Hamburg", "de", "20###", "040-#######", None),
        ("Köln", "de", "50###", "0221-#######", None),
        ("Frankfurt a.M.", "de", "60###", "069-#######", None),
        ("Stuttgart", "de", "70###", "0711-######", None),
        ("Leipzig", "de", "04###", "0341-######", None),
        ("Münster", "de", "48###", "0251-######", None),
        ("Aachen", "de", "52###", "0241-######", None),
        ("Mannheim", "de", "68###", "0621-######", None),
    ],
    "France": [
        ("Paris", "fr", "750##", "(1) ##.##.##.##", None),
        ("Lyon", "fr", "6900#", "78.##.##.##", None),
        ("Marseille", "fr", "130##", "91.##.##.##", None),
        ("Nantes", "fr", "44000", "40.##.##.##", None),
        ("Lille", "fr", "59000", "20.##.##.##", None),
        ("Reims", "fr", "51100", "26.##.##.##", None),
        ("Strasbourg", "fr", "67000", "88.##.##.##", None),
        ("Toulouse", "fr", "31000", "61.##.##.##", None),
        ("Versailles", "fr", "78000", "30.##.##.##", None),
    ],
    "Brazil": [
        ("São Paulo", "pt", "0####-###", "(11) 555-####", "SP"),
        ("Rio de Janeiro", "pt", "2####-###", "(21) 555-####", "RJ"),
        ("Campinas", "pt", "13###-###", "(19) 555-####", "SP"),
        ("Resende", "pt", "27###-###", "(24) 555-####", "SP"),
        ("Belo Horizonte", "pt", "30###-###", "(31) 555-####", "MG"),
    ],
    "UK": [
        ("London", "en", "SW# #XX", "(171) 555-####", None),
        ("Manchester", "en", "M1# #XX", "(161) 555-####", None),
        ("Cowes", "en", "PO31 #XX", "(198) 555-####", "Isle of Wight"),
        ("Edinburgh", "en", "EH# #XX", "(131) 555-####", None),
        ("Bristol", "en", "BS# #XX", "(117) 555-####", None),
    ],
    "Spain": [
        ("Madrid", "es", "280##", "(91) 555 ## ##", None),
        ("Barcelona", "es", "080##", "(93) 203 ####", None),
        ("Sevilla", "es", "410##", "(95) 555 ## ##", None),
        ("Valencia", "es", "460##", "(96) 555 ## ##", None),
    ],
    "Mexico": [
        ("México D.F.", "es", "050##", "(5) 555-####", None),
        ("Guadalajara", "es", "44###", "(3) 555-####", "Jalisco"),
        ("Monterrey", "es", "64###", "(8) 555-####", "Nuevo León"),
    ],
    "Venezuela": [
        ("Caracas", "es", "10##", "(2) 283-####", "DF"),
        ("Barquisimeto", "es", "3508", "(95) 555-####", "Lara"),
        ("I. de Margarita", "es", "4980", "(8) 34-##-##", "Nueva Esparta"),
        ("San Cristóbal", "es", "5022", "(5) 555-####", "Táchira"),
    ],
    "Italy": [
        ("Torino", "it", "10100", "011-#######", None),
        ("Bergamo", "it", "24100", "035-######", None),
        ("Reggio Emilia", "it", "42100", "0522-######", None),
        ("Milano", "it", "201##", "02-########", None),
        ("Bologna", "it", "401##", "051-######", None),
    ],
    "Canada": [
        ("Vancouver", "en", "V#X #X#", "(604) 555-####", "BC"),
        ("Montréal", "fr", "H#X #X#", "(514) 555-####", "Québec"),
        ("Toronto", "en", "M#X #X#", "(416) 555-####", "ON"),
    ],
    "Argentina": [
        ("Buenos Aires", "es", "1010", "(1) 135-####", None),
        ("Córdoba", "es", "5000", "(351) 555-####", None),
        ("Rosario", "es", "2000", "(341) 555-####", None),
    ],
    "Switzerland": [
        ("Bern", "de", "30##", "0452-######", None),
        ("Genève", "fr", "12##", "0897-######", None),
        ("Zürich", "de", "80##", "(01) 555 ## ##", None),
    ],
    "Sweden": [
        ("Luleå", "sv", "S-958 ##", "0921-## ## ##", None),
        ("Stockholm", "sv", "S-1## ##", "08-### ## ##", None),
        ("Göteborg", "sv", "S-4## ##", "031-### ## ##", None),
    ],
    "Portugal": [
        ("Lisboa", "pt", "1###", "(1) 356-####", None),
        ("Porto", "pt", "4###", "(2) 555-####", None),
    ],
    "Finland": [
        ("Helsinki", "fi", "00###", "90-### ###", None),
        ("Oulu", "fi", "90###", "981-### ###", None),
    ],
    "Denmark": [
        ("København", "da", "1###", "31 ## ## ##", None),
        ("Århus", "da", "8200", "86 ## ## ##", None),
    ],
    "Belgium": [
        ("Bruxelles", "fr", "B-1###", "(02) 201 ## ##", None),
        ("Charleroi", "fr", "B-6000", "(071) 23 ## ##", None),
    ],
    "Austria": [
        ("Graz", "de", "8010", "7675-####", None),
        ("Salzburg", "de", "5020", "6562-#####", None),
        ("Wien", "de", "1###", "(1) 555-####", None),
    ],
    "Poland": [
        ("Warszawa", "pl", "01-0##", "(26) 642-####", None),
        ("Kraków", "pl", "30-0##", "(12) 555-####", None),
    ],
    "Norway": [("Stavern", "no", "4110", "07-98 ####", None), ("Oslo", "no", "0###", "22 ## ## ##", None)],
    "Ireland": [
        ("Cork", "en", "T12 X#X#", "2967 ###", "Co. Cork"),
        ("Dublin", "en", "D0#", "(1) 555-####", None),
    ],
    "Japan": [("Tokyo", "ja", "100", "(03) 3555-####", None), ("Osaka", "ja", "545", "(06) 431-####", None)],
    "Australia": [
        ("Melbourne", "en", "3058", "(03) 444-####", "Victoria"),
        ("Sydney", "en", "2042", "(02) 555-####", "NSW"),
    ],
    "Singapore": [("Singapore", "sg", "0512", "555-####", None)],
    "Netherlands": [
        ("Zaandam", "nl", "15## XX", "(075) 555 ####", None),
        ("Amsterdam", "nl", "10## XX", "(020) 555 ####", None),
    ],
}

# Customer countries in the real table's proportions (91 classic customers + 2).
CUSTOMER_COUNTRIES: tuple[tuple[str, int], ...] = (
    ("USA", 14), ("Germany", 12), ("France", 11), ("Brazil", 9), ("UK", 7), ("Spain", 5), ("Mexico", 5),
    ("Venezuela", 4), ("Italy", 3), ("Canada", 3), ("Argentina", 3), ("Switzerland", 2), ("Sweden", 2),
    ("Portugal", 2), ("Finland", 2), ("Denmark", 2), ("Belgium", 2), ("Austria", 2), ("Poland", 1),
    ("Norway", 1), ("Ireland", 1),
)  # fmt: skip
SUPPLIER_COUNTRIES: tuple[tuple[str, int], ...] = (
    ("USA", 4), ("Germany", 3), ("France", 3), ("Japan", 2), ("UK", 2), ("Australia", 2), ("Canada", 2),
    ("Italy", 2), ("Sweden", 2), ("Brazil", 1), ("Spain", 1), ("Norway", 1), ("Singapore", 1),
    ("Denmark", 1), ("Netherlands", 1), ("Finland", 1),
)  # fmt: skip

# language -> first names, last names, street names, street format, customer and supplier name patterns
LANGS: dict[str, dict[str, tuple[str, ...] | str]] = {
    "en": {
        "first": ("Emily", "James", "Sarah", "Michael", "Laura", "David", "Karen", "Thomas", "Helen", "Robert",
                  "Megan", "Daniel", "Fiona", "Patrick", "Grace", "Howard"),
        "last": ("Whitaker", "Morgan", "Hughes", "Fletcher", "Carter", "Sullivan", "Bennett", "Harper", "Lawson",
                 "Reed", "Donnelly", "Mitchell", "Parker", "Graham", "Prescott", "Caldwell", "Ashby", "Monroe"),
        "street": ("Oak St.", "Maple Ave.", "Harbor Blvd.", "King's Rd.", "Elm St.", "Station Rd.", "Church Ln.",
                   "Park Ave.", "High St.", "Mill Rd.", "Cedar Dr.", "Queen St."),
        "street_fmt": "{n} {s}",
        "customer": ("{last} Fine Foods", "{last}'s Market", "{city} Provisions", "{last} & Sons Grocers",
                     "{last} Trading Co.", "The {last} Pantry", "{last} Wholesale Foods", "{city} Gourmet",
                     "{last} Corner Store", "Old {last} Deli"),
        "supplier": ("{last} Breweries", "{last} Seafood Cannery", "{last} Farms", "{last} Orchards",
                     "{last} Bakery Co.", "{last} Mills"),
    },
    "de": {
        "first": ("Hanna", "Karl", "Renate", "Jürgen", "Sabine", "Horst", "Petra", "Matthias", "Ingrid",
                  "Wolfgang", "Ute", "Stefan", "Monika", "Dieter"),
        "last": ("Brandt", "Hoffmann", "Krüger", "Schäfer", "Vogel", "Lehmann", "Winter", "Keller", "Baumann",
                 "Seidel", "Ziegler", "Hartmann", "Franke", "Roth", "Engel", "Kaiser"),
        "street": ("Linden", "Birken", "Garten", "Kirch", "Mühlen", "Schiller", "Goethe", "Berg", "Wald",
                   "Markt", "Hafen", "Rosen"),
        "street_fmt": "{s}str. {n}",
        "customer": ("Feinkost {last}", "{last} Delikatessen", "{last} Lebensmittel GmbH", "Markthalle {last}",
                     "{last} & Söhne", "Spezialitäten {last}", "Landmarkt {last}", "{last} Frischwaren"),
        "supplier": ("{last} Käserei", "{last} Brauerei", "{last} Feinbäckerei GmbH", "{last} Konserven AG",
                     "{last} Fischhandel"),
    },
    "fr": {
        "first": ("Élodie", "Philippe", "Martine", "Jacques", "Sylvie", "Laurent", "Chantal", "Olivier",
                  "Nathalie", "Thierry", "Hélène", "Bernard"),
        "last": ("Dubois", "Lefèvre", "Moreau", "Girard", "Roux", "Fontaine", "Chevalier", "Rousseau", "Blanc",
                 "Garnier", "Mercier", "Lambert", "Perrin", "Morel"),
        "street": ("des Lilas", "de la Paix", "Saint-Honoré", "du Moulin", "des Écoles", "Victor Hugo",
                   "de la Gare", "du Marché", "Pasteur", "des Tanneurs"),
        "street_fmt": "{n}, rue {s}",
        "customer": ("Épicerie {last}", "Maison {last}", "Comptoir {last}", "Les Délices de {city}",
                     "Au Bon Panier {last}", "{last} et Fils", "Saveurs {last}", "La Cave {last}"),
        "supplier": ("Fromagerie {last}", "Conserverie {last}", "Brasserie {last}", "Chocolaterie {last}",
                     "Domaine {last}"),
    },
    "es": {
        "first": ("Carmen", "José", "Lucía", "Miguel", "Rosa", "Alejandro", "Pilar", "Fernando", "Elena",
                  "Javier", "Isabel", "Ricardo"),
        "last": ("García", "Navarro", "Ortega", "Delgado", "Castillo", "Romero", "Herrera", "Vargas", "Mendoza",
                 "Ríos", "Aguilar", "Serrano", "Paredes", "Quintana"),
        "street": ("del Prado", "Mayor", "de la Luna", "San Martín", "Bolívar", "de los Olivos", "Juárez", "Real",
                   "del Carmen", "Sucre"),
        "street_fmt": "Calle {s}, {n}",
        "customer": ("Comercial {last}", "Ultramarinos {last}", "Delicias {last}", "Tienda {last} e Hijos",
                     "Mercado {last}", "Almacén {last}", "Despensa {last}", "Sabores de {city}"),
        "supplier": ("Conservas {last}", "Quesería {last}", "Aceites {last} S.A."),
    },
    "pt": {
        "first": ("João", "Ana", "Paulo", "Beatriz", "Rafael", "Mariana", "Luís", "Fernanda", "Tiago", "Helena"),
        "last": ("Silva", "Ferreira", "Almeida", "Costa", "Carvalho", "Ribeiro", "Pereira", "Barbosa", "Teixeira",
                 "Moura", "Azevedo", "Cardoso"),
        "street": ("das Flores", "Augusta", "do Comércio", "da Praia", "Sete de Setembro", "dos Andradas",
                   "do Ouvidor", "da Liberdade"),
        "street_fmt": "Rua {s}, {n}",
        "customer": ("Empório {last}", "Mercearia {last}", "Casa {last}", "Comércio {last} Ltda.",
                     "Armazém {last}", "Sabores de {city}"),
        "supplier": ("Laticínios {last}", "Café {last} Ltda.", "Conservas {last}"),
    },
    "it": {
        "first": ("Giulia", "Marco", "Francesca", "Luca", "Chiara", "Paolo", "Silvia", "Andrea", "Elena",
                  "Stefano"),
        "last": ("Bianchi", "Ferrari", "Esposito", "Colombo", "Ricci", "Marino", "Greco", "Conti", "Gallo",
                 "Fabbri"),
        "street": ("Garibaldi", "Roma", "dei Mille", "Mazzini", "Cavour", "del Corso", "Verdi",
                   "della Repubblica"),
        "street_fmt": "Via {s} {n}",
        "customer": ("Alimentari {last}", "Salumeria {last}", "Bottega {last}", "Gastronomia {last}",
                     "Enoteca {last}", "Sapori di {city}"),
        "supplier": ("Pastificio {last}", "Caseificio {last}", "Oleificio {last}"),
    },
    "sv": {
        "first": ("Astrid", "Lars", "Ingrid", "Nils", "Karin", "Erik", "Maja", "Olof"),
        "last": ("Lindqvist", "Bergström", "Nyberg", "Sjöberg", "Holm", "Ekström", "Lundgren", "Dahlin"),
        "street": ("Björk", "Sjö", "Kungs", "Drottning", "Ek", "Stor"),
        "street_fmt": "{s}vägen {n}",
        "customer": ("{last} Livs", "{last}s Delikatesser AB", "{last} Handelshus", "{city} Matbod"),
        "supplier": ("{last} Fisk AB", "{last} Knäcke AB"),
    },
    "da": {
        "first": ("Mette", "Søren", "Birgitte", "Henrik", "Lone", "Jens"),
        "last": ("Rasmussen", "Kjær", "Madsen", "Thygesen", "Lund", "Østergaard"),
        "street": ("Vester", "Nørre", "Strand", "Kirke", "Møller"),
        "street_fmt": "{s}gade {n}",
        "customer": ("{last} Købmand", "{last}s Delikatesser", "{city} Fødevarer"),
        "supplier": ("{last} Sild", "{last} Mejeri"),
    },
    "no": {
        "first": ("Torbjørn", "Kari", "Håkon", "Sigrid", "Arne", "Liv"),
        "last": ("Haugen", "Solberg", "Bakke", "Strand", "Lie", "Berntsen"),
        "street": ("Kirke", "Skole", "Fjord", "Stor"),
        "street_fmt": "{s}veien {n}",
        "customer": ("{last} Dagligvare", "{last} Matsenter", "{city} Kolonial"),
        "supplier": ("{last} Meieri", "{last} Fiskeri"),
    },
    "fi": {
        "first": ("Aino", "Juha", "Kaisa", "Mikko", "Liisa", "Pekka"),
        "last": ("Virtanen", "Mäkinen", "Laine", "Koskinen", "Heikkinen", "Lehtonen"),
        "street": ("Koulu", "Kirkko", "Puisto", "Rauta", "Satama"),
        "street_fmt": "{s}katu {n}",
        "customer": ("{last} Herkku Oy", "Tukku {last}", "Kauppa {last} Oy"),
        "supplier": ("{last} Makeiset Oy",),
    },
    "pl": {
        "first": ("Agnieszka", "Tomasz", "Katarzyna", "Piotr", "Magdalena", "Marek"),
        "last": ("Nowak", "Kowalczyk", "Wiśniewski", "Zieliński", "Lewandowski", "Wójcik"),
        "street": ("Długa", "Polna", "Kwiatowa", "Lipowa", "Ogrodowa"),
        "street_fmt": "ul. {s} {n}",
        "customer": ("Delikatesy {last}", "Sklep {last}", "Hurtownia {last}"),
        "supplier": ("Przetwory {last}",),
    },
    "nl": {
        "first": ("Anke", "Joost", "Marieke", "Pieter", "Sanne", "Willem"),
        "last": ("de Vries", "Bakker", "Visser", "Smit", "Mulder", "Jansen"),
        "street": ("Kerk", "Molen", "Haven", "Dorps"),
        "street_fmt": "{s}straat {n}",
        "customer": ("{last} Voedingswaren B.V.", "Delicatessen {last}"),
        "supplier": ("{last} Snoepfabriek", "{last} Kaas B.V."),
    },
    "ja": {
        "first": ("Yuki", "Hiroshi", "Aiko", "Kenji", "Naomi", "Takeshi"),
        "last": ("Tanaka", "Watanabe", "Kobayashi", "Yamamoto", "Nakamura", "Sato"),
        "street": ("Chuo-ku", "Minato-ku", "Nakano", "Kita-ku"),
        "street_fmt": "{n}-3 {s}",
        "customer": ("{last} Shoji", "{last} Foods K.K."),
        "supplier": ("{last} Seika", "{last} Suisan"),
    },
    "sg": {
        "first": ("Wei Ling", "Kumar", "Mei", "Jun", "Siti", "Rajesh"),
        "last": ("Tan", "Lim", "Ng", "Goh", "Rahman", "Pillai"),
        "street": ("Orchard Rd.", "Serangoon Loop", "Tanjong Pagar Rd.", "Bukit Timah Rd."),
        "street_fmt": "{n} {s}",
        "customer": ("{last} Trading Pte.", "{last} Provisions"),
        "supplier": ("{last} Trading", "{last} Foodstuffs Pte."),
    },
}  # fmt: skip

CONTACT_TITLES: tuple[tuple[str, int], ...] = (
    ("Sales Representative", 17), ("Owner", 17), ("Marketing Manager", 12), ("Sales Manager", 11),
    ("Accounting Manager", 10), ("Sales Associate", 7), ("Order Administrator", 6), ("Marketing Assistant", 6),
    ("Sales Agent", 5), ("Assistant Sales Agent", 2), ("Owner/Marketing Assistant", 1),
    ("Assistant Sales Representative", 1),
)  # fmt: skip
SUPPLIER_TITLES = ("Purchasing Manager", "Order Administrator", "Sales Representative", "Marketing Manager",
                   "Export Administrator", "Sales Manager", "Accounting Manager", "Product Manager",
                   "Regional Account Rep.", "Wholesale Account Agent")  # fmt: skip

CATEGORIES: tuple[tuple[str, str, int], ...] = (
    ("Beverages", "Soft drinks, coffees, teas, beers, and ales", 12),
    ("Condiments", "Sweet and savory sauces, relishes, spreads, and seasonings", 12),
    ("Confections", "Desserts, candies, and sweet breads", 13),
    ("Dairy Products", "Cheeses", 10),
    ("Grains/Cereals", "Breads, crackers, pasta, and cereal", 7),
    ("Meat/Poultry", "Prepared meats", 6),
    ("Produce", "Dried fruit and bean curd", 5),
    ("Seafood", "Seaweed and fish", 12),
)
# Fictional product names per category (more than needed: each seed draws its own assortment).
PRODUCT_NAMES: tuple[tuple[str, ...], ...] = (
    ("Highland Black Tea", "Alpine Spring Water", "Bergamot Earl Grey", "Dark Roast Espresso", "Golden Pilsner",
     "Abbey Dubbel Ale", "Elderflower Cordial", "Sencha Green Tea", "Cider Brut", "Ginger Beer",
     "Mountain Blend Coffee", "Imperial Stout", "Rooibos Vanilla", "Cranberry Nectar", "Blood Orange Soda"),
    ("Smoked Paprika Rub", "Wildflower Honey", "Tamarind Chutney", "Dijon-Style Mustard", "Sweet Chili Sauce",
     "Black Garlic Paste", "Balsamic Glaze", "Hot Pepper Relish", "Lingonberry Preserve", "Soy Ginger Marinade",
     "Provence Herb Mix", "Mango Salsa", "Truffle Oil", "Maple Syrup Amber", "Cajun Spice Blend"),
    ("Hazelnut Pralines", "Dark Chocolate Truffles", "Almond Marzipan Bars", "Salted Caramel Fudge",
     "Butter Shortbread", "Licorice Twists", "Gingerbread Hearts", "Honey Nougat", "Lemon Tartlets",
     "Raspberry Jellies", "Cinnamon Rolls", "Pistachio Biscotti", "Mint Chocolate Wafers", "Apricot Sponge Cake",
     "Cocoa Meringues"),
    ("Aged Gouda Reserve", "Alpine Mountain Cheese", "Fresh Mozzarella", "Blue Vein Cheese", "Goat Cheese Log",
     "Smoked Cheddar", "Cultured Butter", "Brie de Campagne", "Mascarpone", "Feta in Brine",
     "Pecorino Stagionato", "Skyr Natural"),
    ("Rye Crispbread", "Durum Spaghetti", "Stone-Ground Polenta", "Wild Rice Blend", "Whole Wheat Fusilli",
     "Spelt Flour", "Oat Crackers", "Buckwheat Noodles", "Sourdough Loaf Mix"),
    ("Smoked Ham Hock", "Duck Confit", "Venison Pâté", "Spiced Lamb Sausage", "Beef Jerky Classic",
     "Turkey Pastrami", "Chicken Liver Terrine"),
    ("Sun-Dried Tomatoes", "Dried Apricots", "Marinated Tofu", "Pickled Beetroot", "Dried Porcini",
     "Roasted Red Peppers"),
    ("Smoked Salmon Slices", "Pickled Herring", "Marinated Anchovies", "Sardines in Oil", "Crab Meat Tins",
     "Frozen Tiger Prawns", "Smoked Mackerel Fillets", "Lumpfish Roe", "Clam Chowder Base",
     "Tuna Loin in Olive Oil", "Dried Nori Sheets", "Cod Roe Spread", "Frozen Scallops", "Octopus Salad"),
)  # fmt: skip
PACKAGING: tuple[tuple[str, ...], ...] = (
    ("24 - 12 oz bottles", "12 - 1 l bottles", "10 boxes x 20 bags", "16 - 500 g tins", "24 - 355 ml cans",
     "500 ml"),
    ("12 - 550 ml bottles", "48 - 6 oz jars", "12 - 8 oz jars", "24 - 250 ml jars", "12 - 200 ml jars"),
    ("10 boxes x 12 pieces", "30 gift boxes", "24 pkgs. x 4 pieces", "100 - 250 g bags", "10 - 200 g glasses",
     "20 - 2 kg bags"),
    ("12 - 100 g pkgs", "10 - 500 g pkgs.", "24 - 200 g pkgs.", "1 kg pkg.", "2 kg box", "15 - 300 g rounds"),
    ("24 - 500 g pkgs.", "12 - 1 lb pkgs.", "16 - 2 kg boxes", "32 - 1 kg pkgs.", "20 - 450 g glasses"),
    ("48 pieces", "16 pies", "24 boxes x 2 pies", "20 - 1 kg tins", "50 bags x 30 sausgs."),
    ("12 - 1 lb pkgs.", "40 - 100 g pkgs.", "20 - 2 kg bags", "10 - 500 g pkgs."),
    ("12 - 200 ml jars", "24 - 150 g jars", "10 - 200 g glasses", "16 kg pkg.", "1k pkg.", "24 - 4 oz tins"),
)  # fmt: skip

SHIPPERS = (("Swift Courier", "(503) 555-7120"), ("Allied Parcel Service", "(503) 555-2846"),
            ("Meridian Freight", "(503) 555-6093"))  # fmt: skip

# EmployeeID order matters: 2 is the VP everyone reports to, 5 manages the London office.
EMPLOYEES: tuple[tuple[Any, ...], ...] = (
    ("Whitfield", "Grace", "Sales Representative", "Ms.", "1968-03-14", "2012-04-02", "1420 Pine St.",
     "Seattle", "98101", "USA", "(206) 555-3190", "5521", 2),
    ("Carrington", "Douglas", "Vice President, Sales", "Dr.", "1971-10-05", "2012-08-20", "88 Cliff Ave.",
     "Tacoma", "98402", "USA", "(206) 555-7781", "3460", None),
    ("Okafor", "Linda", "Sales Representative", "Ms.", "1982-06-21", "2012-03-26", "315 Lake St. S.",
     "Kirkland", "98033", "USA", "(206) 555-6034", "3318", 2),
    ("Brennan", "Martha", "Sales Representative", "Mrs.", "1958-11-30", "2013-05-06", "16020 NE 85th St.",
     "Redmond", "98052", "USA", "(206) 555-2247", "5150", 2),
    ("Ashworth", "Nigel", "Sales Manager", "Mr.", "1974-02-11", "2013-10-14", "27 Fulham Rd.", "London",
     "SW3 6RL", "UK", "(71) 555-9043", "3452", 2),
    ("Hollis", "Simon", "Sales Representative", "Mr.", "1982-09-03", "2013-10-21", "5 Tanner St.", "London",
     "SE1 3LE", "UK", "(71) 555-1186", "431", 5),
    ("Pemberton", "Oliver", "Sales Representative", "Mr.", "1979-04-17", "2014-01-06", "Ivy Cottage, Ash Lane",
     "London", "RG1 8NQ", "UK", "(71) 555-6625", "467", 5),
    ("Delgado", "Rosa", "Inside Sales Coordinator", "Ms.", "1977-12-01", "2014-03-03", "2210 Eastlake Ave. E.",
     "Seattle", "98102", "USA", "(206) 555-4471", "2351", 2),
    ("Finch", "Harriet", "Sales Representative", "Ms.", "1985-08-25", "2014-11-17", "12 Wren Close", "London",
     "WC2 4LT", "UK", "(71) 555-3318", "455", 5),
)  # fmt: skip
EMPLOYEE_NOTES = (
    "Holds a BA in economics and joined the company after five years in food retail.",
    "Joined as a sales representative, was promoted to sales manager and then to vice president of sales.",
    "Holds a BS in chemistry; fluent in French and Spanish.",
    "Former restaurant owner; handles the company's longest-standing accounts.",
    "Graduated in business studies and manages the London sales office.",
    "Studied economics; specialises in the Scandinavian and Benelux markets.",
    "Served several years abroad before joining; speaks German and Italian.",
    "Coordinates order processing between the sales team and the warehouses.",
    "Holds a BA in English; joined the London office as its newest representative.",
)
# Order shares of the nine employees and three carriers in the classic orders.
EMPLOYEE_WEIGHTS = (123, 96, 127, 156, 42, 67, 72, 104, 43)
EMPLOYEE_TERRITORY_COUNTS = (2, 7, 4, 3, 7, 5, 10, 4, 7)
SHIPVIA_WEIGHTS = (249, 326, 255)
FREIGHT_RATE = {1: 0.85, 2: 1.15, 3: 1.0}  # per unit shipped, before noise
LINE_COUNT_WEIGHTS = (137, 283, 248, 125, 33)  # 1..5 lines per order, classic shares
DISCOUNTS = (0.05, 0.1, 0.15, 0.2, 0.25)

REGIONS = ("Eastern", "Western", "Northern", "Southern")
TERRITORIES: tuple[tuple[str, str, int], ...] = (
    ("02116", "Boston", 1), ("02139", "Cambridge", 1), ("02903", "Providence", 1), ("06103", "Hartford", 1),
    ("06510", "New Haven", 1), ("12207", "Albany", 1), ("14604", "Rochester", 1), ("14202", "Buffalo", 1),
    ("13202", "Syracuse", 1), ("19103", "Philadelphia", 1), ("15222", "Pittsburgh", 1), ("07102", "Newark", 1),
    ("08608", "Trenton", 1), ("21201", "Baltimore", 1), ("19801", "Wilmington", 1), ("04101", "Portland", 1),
    ("05401", "Burlington", 1), ("03101", "Manchester", 1), ("01608", "Worcester", 1),
    ("98104", "Seattle", 2), ("98004", "Bellevue", 2), ("98402", "Tacoma", 2), ("99201", "Spokane", 2),
    ("97204", "Portland", 2), ("97401", "Eugene", 2), ("83702", "Boise", 2), ("84111", "Salt Lake City", 2),
    ("80202", "Denver", 2), ("80903", "Colorado Springs", 2), ("85004", "Phoenix", 2), ("85701", "Tucson", 2),
    ("92101", "San Diego", 2), ("95814", "Sacramento", 2), ("89501", "Reno", 2),
    ("60601", "Chicago", 3), ("53202", "Milwaukee", 3), ("55401", "Minneapolis", 3), ("55101", "St. Paul", 3),
    ("48226", "Detroit", 3), ("49503", "Grand Rapids", 3), ("44113", "Cleveland", 3), ("43215", "Columbus", 3),
    ("46204", "Indianapolis", 3), ("53703", "Madison", 3), ("58102", "Fargo", 3),
    ("30303", "Atlanta", 4), ("31401", "Savannah", 4), ("32801", "Orlando", 4), ("33130", "Miami", 4),
    ("37201", "Nashville", 4), ("28202", "Charlotte", 4), ("70112", "New Orleans", 4), ("77002", "Houston", 4),
)  # fmt: skip

CLASSIC_START = dt.date(2016, 7, 4)
CLASSIC_END = dt.date(2018, 5, 6)
CLASSIC_SHARE = 830 / 16282
EXTENDED_START = dt.date(2012, 7, 10)
EXTENDED_END = dt.date(2023, 6, 30)
# Orders before this date were priced from the previous list (Northwind's older orders carry older prices).
PRICE_LIST_CHANGE = dt.date(2017, 1, 1)
OLD_PRICE_FACTOR = 0.8
INACTIVE_CUSTOMERS = 4
FIRST_ORDER_ID = 10248

_ORDER_COLUMNS = ("OrderID", "CustomerID", "EmployeeID", "OrderDate", "RequiredDate", "ShippedDate", "ShipVia",
                  "Freight", "ShipName", "ShipAddress", "ShipCity", "ShipRegion", "ShipPostalCode",
                  "ShipCountry")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Embedded builder
# ---------------------------------------------------------------------------------------------


def _check_options(options: Mapping[str, Any]) -> int:
    where = f"{SOURCE}.options"
    for key in options:
        if key not in OPTION_NAMES:
            raise SourceError(where, f"unknown option '{key}'", f"one of {list(OPTION_NAMES)}")
    orders = options.get("orders", DEFAULT_ORDERS)
    if isinstance(orders, bool) or not isinstance(orders, int):
        raise SourceError(where, f"option 'orders' is {orders!r}", "an integer")
    if not MIN_ORDERS <= orders <= MAX_ORDERS:
        raise SourceError(
            where, f"option 'orders' is {orders}", f"an integer in [{MIN_ORDERS}, {MAX_ORDERS}]"
        )
    return orders


def _fill(rng: random.Random, shape: str) -> str:
    """Instantiate a postal-code or phone shape: '#' -> digit, 'X' -> capital letter."""
    out = []
    for ch in shape:
        if ch == "#":
            out.append(str(rng.randrange(10)))
        elif ch == "X":
            out.append(chr(ord("A") + rng.randrange(26)))
        else:
            out.append(ch)
    return "".join(out)


# Letters NFKD does not decompose into ASCII (so "København" gives KOB..., not KBE...).
_TRANSLIT = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L"})


def _ascii_letters(text: str) -> list[str]:
    folded = (
        unicodedata.normalize("NFKD", text.translate(_TRANSLIT)).encode("ascii", "ignore").decode("ascii")
    )
    return [w.upper() for w in re.findall(r"[A-Za-z]+", folded)]


def _customer_code(name: str, taken: set[str]) -> str:
    """Northwind-style 5-letter CustomerID from the company name, unique among `taken`."""
    words = _ascii_letters(name) or ["CUSTOMER"]
    first, rest = words[0], "".join(words[1:])
    candidates = [
        first[:3] + rest[:2],
        first[:2] + rest[:3],
        first[:4] + rest[:1],
        first[:1] + rest[:4],
        first[:3] + rest[1:3],
        first[:3] + rest[2:4],
    ]
    for cand in candidates:
        cand = (cand + first + rest + "XXXXX")[:5]
        if cand not in taken:
            return cand
    stem = (first + rest + "XXXXX")[:4]
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        if stem + letter not in taken:
            return stem + letter
    raise AssertionError("no free customer code")  # 26 fallbacks per stem; never reached with 93 names


def _company(rng: random.Random, lang: str, role: str, city: str, used: set[str]) -> tuple[str, str, str]:
    """A unique company name plus its contact's first and last name."""
    spec = LANGS[lang]
    for _ in range(200):
        last = rng.choice(spec["last"])
        name = str(rng.choice(spec[role])).format(last=last, city=city)
        if name not in used:
            used.add(name)
            contact_last = last if rng.random() < 0.5 else rng.choice(spec["last"])
            return name, str(rng.choice(spec["first"])), str(contact_last)
    raise AssertionError(f"name patterns for {lang}/{role} exhausted")


def _address(rng: random.Random, lang: str) -> str:
    spec = LANGS[lang]
    return str(spec["street_fmt"]).format(s=rng.choice(spec["street"]), n=rng.randint(1, 320))


def _expand(counts: Sequence[tuple[str, int]]) -> list[str]:
    return [country for country, n in counts for _ in range(n)]


def _customers(rng: random.Random) -> list[tuple[Any, ...]]:
    used_names: set[str] = set()
    codes: set[str] = set()
    titles, title_w = zip(*CONTACT_TITLES, strict=True)
    rows = []
    for country in _expand(CUSTOMER_COUNTRIES):
        city, lang, postal, phone, _native = rng.choice(CITIES[country])
        name, first, last = _company(rng, lang, "customer", city, used_names)
        code = _customer_code(name, codes)
        codes.add(code)
        phone_no = _fill(rng, phone)
        fax = _fill(rng, phone) if rng.random() < 0.7 else None
        rows.append((code, name, f"{first} {last}", rng.choices(titles, title_w)[0], _address(rng, lang), city,
                     UPDATE_REGION[country], _fill(rng, postal), country, phone_no, fax))  # fmt: skip
    rows.sort(key=lambda r: r[0])  # the real table is in CustomerID order
    return rows


def _suppliers(rng: random.Random, used_names: set[str]) -> list[tuple[Any, ...]]:
    rows = []
    for sid, country in enumerate(_expand(SUPPLIER_COUNTRIES), start=1):
        city, lang, postal, phone, native = rng.choice(CITIES[country])
        name, first, last = _company(rng, lang, "supplier", city, used_names)
        fax = _fill(rng, phone) if rng.random() < 0.4 else None
        homepage = None
        if rng.random() < 0.15:
            slug = "".join(_ascii_letters(name)).lower()[:12]
            homepage = f"{name} (on the World Wide Web)#http://www.{slug}.example.com/#"
        region = UPDATE_REGION.get(country, native)
        rows.append((sid, name, f"{first} {last}", rng.choice(SUPPLIER_TITLES), _address(rng, lang), city, region,
                     _fill(rng, postal), country, _fill(rng, phone), fax, homepage))  # fmt: skip
    return rows


def _products(rng: random.Random, n_suppliers: int) -> list[tuple[Any, ...]]:
    total = sum(n for _, _, n in CATEGORIES)
    # every supplier delivers at least one product, the rest are spread at random
    suppliers = list(range(1, n_suppliers + 1)) + [
        rng.randint(1, n_suppliers) for _ in range(total - n_suppliers)
    ]
    rng.shuffle(suppliers)
    rows = []
    pid = 0
    for cat_index, (_, _, count) in enumerate(CATEGORIES):
        names = rng.sample(PRODUCT_NAMES[cat_index], count)
        for name in names:
            pid += 1
            price = min(263.5, max(2.5, rng.lognormvariate(math.log(20.0), 0.75)))
            price = round(round(price * 4) / 4, 2)
            discontinued = "1" if rng.random() < 0.1 else "0"
            in_stock = 0 if discontinued == "1" and rng.random() < 0.5 else rng.randint(0, 125)
            on_order = rng.choice((0, 0, 0, 0, 10, 20, 30, 40, 50, 60, 70, 80, 100))
            reorder = rng.choice((0, 5, 10, 15, 20, 25, 30))
            rows.append((pid, name, suppliers[pid - 1], cat_index + 1, rng.choice(PACKAGING[cat_index]), price,
                         in_stock, on_order, reorder, discontinued))  # fmt: skip
    return rows


def _employees() -> list[tuple[Any, ...]]:
    rows = []
    for eid, e in enumerate(EMPLOYEES, start=1):
        last, first, title, courtesy, birth, hire, address, city, postal, country, phone, ext, boss = e
        rows.append((eid, last, first, title, courtesy, birth, hire, address, city, UPDATE_REGION[country], postal,
                     country, phone, ext, None, EMPLOYEE_NOTES[eid - 1], boss,
                     f"http://accweb/employees/{last.lower()}.bmp"))  # fmt: skip
    return rows


def _employee_territories(rng: random.Random) -> list[tuple[int, str]]:
    unassigned = set(rng.sample(range(len(TERRITORIES)), len(TERRITORIES) - sum(EMPLOYEE_TERRITORY_COUNTS)))
    pool = [t[0] for i, t in enumerate(TERRITORIES) if i not in unassigned]
    rows: list[tuple[int, str]] = []
    pos = 0
    for eid, count in enumerate(EMPLOYEE_TERRITORY_COUNTS, start=1):
        rows.extend((eid, tid) for tid in pool[pos : pos + count])
        pos += count
    return rows


def _classic_dates(rng: random.Random, n: int) -> list[dt.date]:
    """Weekday dates whose density rises linearly over the classic period (the business grew)."""
    span = (CLASSIC_END - CLASSIC_START).days
    dates = []
    for _ in range(n):
        x = (-1.0 + math.sqrt(1.0 + 8.0 * rng.random())) / 2.0  # inverse CDF of density (1 + 2x) / 2
        day = CLASSIC_START + dt.timedelta(days=min(span, int(x * (span + 1))))
        while day.weekday() >= 5:  # orders are keyed in on business days
            day -= dt.timedelta(days=1)
        dates.append(max(day, CLASSIC_START))
    dates.sort()
    return dates


def _uniform_date(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def _order_plan(
    rng: random.Random, n_orders: int, active: list[str], weights: list[float]
) -> list[tuple[str, dt.date, dt.date]]:
    """(customer, date, snapshot) per order, classic block first, then the extended block."""
    n_classic = max(1, round(n_orders * CLASSIC_SHARE))
    n_extended = n_orders - n_classic
    plan = [(c, d, CLASSIC_END) for c, d in zip(rng.choices(active, weights, k=n_classic),
                                               _classic_dates(rng, n_classic), strict=True)]  # fmt: skip
    # Two early/late orders per ordering customer guarantee everyone buys in at least two years.
    split = dt.date(2018, 1, 1)
    extended = []
    for cust in active:
        extended.append((cust, _uniform_date(rng, EXTENDED_START, split - dt.timedelta(days=1))))
        extended.append((cust, _uniform_date(rng, split, EXTENDED_END)))
    for cust in rng.choices(active, weights, k=n_extended - len(extended)):
        extended.append((cust, _uniform_date(rng, EXTENDED_START, EXTENDED_END)))
    rng.shuffle(extended)
    plan.extend((c, d, EXTENDED_END) for c, d in extended)
    return plan


def _quantity(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.03:
        return rng.choice((70, 80, 90, 100, 120, 130))
    if r < 0.58:
        return 5 * rng.randint(1, 8)
    return rng.randint(1, 60)


def _orders_and_lines(
    rng: random.Random, n_orders: int, customers: list[tuple[Any, ...]], products: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    customer_by_id = {c[0]: c for c in customers}
    ids = [c[0] for c in customers]
    inactive = set(rng.sample(ids, INACTIVE_CUSTOMERS))
    active = [cid for cid in ids if cid not in inactive]
    # skewed accounts (the classic data ranges from 1 to 31 orders per customer), not one giant
    weights = [rng.lognormvariate(0.0, 0.6) for _ in active]
    discount_rate = {cid: (0.0 if rng.random() < 0.35 else rng.uniform(0.2, 0.75)) for cid in active}
    product_ids = [p[0] for p in products]
    price = {p[0]: p[5] for p in products}
    popularity = [rng.lognormvariate(0.0, 0.7) for _ in products]
    cum_pop = []
    acc = 0.0
    for w in popularity:
        acc += w
        cum_pop.append(acc)
    employees = list(range(1, len(EMPLOYEES) + 1))

    orders, lines = [], []
    for index, (cust, order_date, snapshot) in enumerate(_order_plan(rng, n_orders, active, weights)):
        order_id = FIRST_ORDER_ID + index
        n_lines = rng.choices((1, 2, 3, 4, 5), LINE_COUNT_WEIGHTS)[0]
        chosen: list[int] = []
        while len(chosen) < n_lines:
            pid = rng.choices(product_ids, cum_weights=cum_pop)[0]
            if pid not in chosen:
                chosen.append(pid)
        old_prices = order_date < PRICE_LIST_CHANGE
        total_qty = 0
        for pid in sorted(chosen):
            qty = _quantity(rng)
            total_qty += qty
            unit = round(price[pid] * OLD_PRICE_FACTOR, 2) if old_prices else price[pid]
            disc = rng.choice(DISCOUNTS) if rng.random() < discount_rate[cust] else 0.0
            lines.append((order_id, pid, unit, qty, disc))
        ship_via = rng.choices((1, 2, 3), SHIPVIA_WEIGHTS)[0]
        freight = max(0.02, round(total_qty * FREIGHT_RATE[ship_via] * rng.lognormvariate(0.0, 0.55), 2))
        required = order_date + dt.timedelta(days=rng.choices((28, 14, 42), (85, 8, 7))[0])
        shipped = order_date + dt.timedelta(days=min(37, 1 + int(rng.expovariate(1 / 7.5))))
        c = customer_by_id[cust]
        orders.append((order_id, cust, rng.choices(employees, EMPLOYEE_WEIGHTS)[0], order_date.isoformat(),
                       required.isoformat(), shipped.isoformat() if shipped <= snapshot else None, ship_via,
                       freight, c[1], c[4], c[5], c[6], c[7], c[8]))  # fmt: skip
    return orders, lines


def _create_schema(conn: sqlite3.Connection) -> None:
    for _, ddl in (*TABLE_DDL, *VIEW_DDL):
        conn.execute(ddl)


def _insert(conn: sqlite3.Connection, table: str, rows: Sequence[Sequence[Any]]) -> None:
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        conn.executemany(f"INSERT INTO {_quote(table)} VALUES ({marks})", rows)


def build_embedded(target: Path, *, seed: int, options: Mapping[str, Any]) -> None:
    """Write a synthetic, schema-faithful Northwind to `target`; same seed and options => same bytes."""
    n_orders = _check_options(options)
    rng = random.Random(seed)
    customers = _customers(rng)
    suppliers = _suppliers(rng, {c[1] for c in customers})
    products = _products(rng, len(suppliers))
    territories = _employee_territories(rng)
    orders, lines = _orders_and_lines(rng, n_orders, customers, products)
    with new_database(target) as conn:
        _create_schema(conn)
        _insert(conn, "Categories", [(i, n, d, None) for i, (n, d, _) in enumerate(CATEGORIES, start=1)])
        _insert(conn, "Customers", customers)
        _insert(conn, "Employees", _employees())
        _insert(conn, "Regions", [(i, r) for i, r in enumerate(REGIONS, start=1)])
        _insert(conn, "Territories", list(TERRITORIES))
        _insert(conn, "EmployeeTerritories", territories)
        _insert(conn, "Shippers", [(i, n, p) for i, (n, p) in enumerate(SHIPPERS, start=1)])
        _insert(conn, "Suppliers", suppliers)
        _insert(conn, "Products", products)
        _insert(conn, "Orders", orders)
        _insert(conn, "Order Details", lines)
        write_meta(
            conn,
            {
                "kind": "embedded",
                "synthetic": True,
                "source": SOURCE,
                "builder_version": BUILDER_VERSION,
                "seed": seed,
                "options": {"orders": n_orders},
                "date_format": "YYYY-MM-DD",
            },
        )


# ---------------------------------------------------------------------------------------------
# Real-data adapter
# ---------------------------------------------------------------------------------------------


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_real(target: Path, input_path: Path) -> None:
    """Build from the real `northwind.db`, or from a folder with upstream's create.sql + update.sql."""
    input_path = Path(input_path)
    expected = "northwind.db, or a folder with jpwhite3's create.sql and update.sql"
    if not input_path.exists():
        raise SourceError(input_path, "does not exist", expected)
    if input_path.is_dir():
        db = input_path / "northwind.db"
        if db.is_file():
            _build_from_db(target, db)
            return
        for name in ("create.sql", "update.sql"):
            if not (input_path / name).is_file():
                raise SourceError(input_path / name, f"'{name}' is missing from the folder", expected)
        _build_from_dump(target, input_path / "create.sql", input_path / "update.sql")
    else:
        _build_from_db(target, input_path)


def _build_from_dump(target: Path, create_sql: Path, update_sql: Path) -> None:
    scripts = [(create_sql, _read_sql(create_sql)), (update_sql, _read_sql(update_sql))]
    with new_database(target) as conn:
        for path, text in scripts:
            # executescript commits first and runs statement by statement, as the sqlite3 shell of
            # upstream's makefile does; a transaction is reopened for new_database's final COMMIT.
            try:
                conn.executescript(text)
            except sqlite3.Error as exc:
                raise SourceError(path, f"SQL script failed: {exc}", "jpwhite3's Northwind SQL dump") from exc
            if not conn.in_transaction:
                conn.execute("BEGIN")
        require_tables(conn, create_sql, REQUIRED)
        write_meta(
            conn,
            {
                "kind": "real",
                "synthetic": False,
                "source": SOURCE,
                "builder_version": BUILDER_VERSION,
                "inputs": [create_sql.name, update_sql.name],
                "input_format": "sql_dump",
                "input_sha256": {p.name: sha256_file(p) for p, _ in scripts},
            },
        )


def _build_from_db(target: Path, db: Path) -> None:
    src = open_readonly(db)
    try:
        require_tables(src, db, REQUIRED)
        objects = src.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' AND substr(name, 1, 7) != '_memsql' ORDER BY rowid"
        ).fetchall()
        has_sequence = src.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone()
        with new_database(target) as conn:
            tables = [(name, sql) for kind, name, sql in objects if kind == "table"]
            for _, sql in tables:
                conn.execute(sql)
            for name, _ in tables:
                cols = [r[1] for r in src.execute(f"PRAGMA table_info({_quote(name)})")]
                col_list = ", ".join(_quote(c) for c in cols)
                cursor = src.execute(f"SELECT {col_list} FROM {_quote(name)}")
                conn.executemany(
                    f"INSERT INTO {_quote(name)} ({col_list}) VALUES ({', '.join('?' * len(cols))})", cursor
                )
            if has_sequence:
                # AUTOINCREMENT counters as in the source, not as re-derived by our inserts
                conn.execute("DELETE FROM sqlite_sequence")
                conn.executemany(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                    src.execute("SELECT name, seq FROM sqlite_sequence ORDER BY rowid"),
                )
            # indexes, triggers, views after the data: triggers must not fire on the copy
            for kind, _, sql in objects:
                if kind != "table":
                    conn.execute(sql)
            require_tables(conn, db, REQUIRED)
            write_meta(
                conn,
                {
                    "kind": "real",
                    "synthetic": False,
                    "source": SOURCE,
                    "builder_version": BUILDER_VERSION,
                    "inputs": [db.name],
                    "input_format": "sqlite",
                    "input_sha256": {db.name: sha256_file(db)},
                },
            )
    except sqlite3.Error as exc:
        raise SourceError(
            db, f"cannot copy the database: {exc}", "a readable Northwind SQLite database"
        ) from exc
    finally:
        src.close()
